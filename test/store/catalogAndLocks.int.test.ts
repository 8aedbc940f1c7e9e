import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SessionLockedError } from '../../src/store/errors.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import { processStart } from '../../src/store/sessionLock.ts';
import { StreamBuilder } from './support/records.ts';
import { startWorker } from './support/startWorker.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'reloop-catalog-'));
  dirs.push(dir);
  return dir;
}

const quiet = { onWarning: () => undefined };
const streamFile = (dir: string, id: string) => join(dir, 'sessions', `${id}.jsonl`);
const lockFile = (dir: string, id: string) => join(dir, 'sessions', `${id}.lock`);

describe('the sessions catalog is fresh whatever changed the stream', () => {
  it('a stream rewritten in place to the same size is refolded (not trusted by its size)', async () => {
    const dir = await tempDir();
    const store = await openFileStore(dir, quiet);
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created('aaaa'), s.user('hello')], { expectedSeq: 0 });
    expect((await store.list())[0]?.title).toBe('aaaa');
    await store.close();
    const text = await readFile(streamFile(dir, 's1'), 'utf8');
    await writeFile(streamFile(dir, 's1'), text.replace('"aaaa"', '"bbbb"'));
    const again = await openFileStore(dir, quiet);
    expect((await again.list())[0]?.title).toBe('bbbb');
    await again.close();
  });

  it('a stream replaced by a longer one (another file) is refolded from its start', async () => {
    const dir = await tempDir();
    const store = await openFileStore(dir, quiet);
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created('first'), s.user('hello')], { expectedSeq: 0 });
    expect((await store.list())[0]).toMatchObject({ title: 'first', lastSeq: 2 });
    await store.close();
    // Another stream of the same session, longer, moved into place (a restore from a backup).
    const other = await openFileStore(await tempDir(), quiet);
    const o = new StreamBuilder('s1');
    await other.append('s1', [o.created('second'), o.user('a'), o.user('b')], { expectedSeq: 0 });
    await other.close();
    await rename(streamFile(other.dir, 's1'), streamFile(dir, 's1'));
    const again = await openFileStore(dir, quiet);
    expect((await again.list())[0]).toMatchObject({ title: 'second', lastSeq: 3 });
    await again.close();
  });
});

describe('a run whose writer died shows interrupted', () => {
  it('running while its writer lives, interrupted once it is killed, running again when resumed', async () => {
    const dir = await tempDir();
    const worker = startWorker('run', dir, 's1');
    expect(await worker.next()).toMatchObject({ ready: true, lastSeq: 2 });
    const store = await openFileStore(dir, quiet);
    expect((await store.list())[0]).toMatchObject({ id: 's1', status: 'running' });
    worker.child.kill('SIGKILL');
    await worker.exit;
    expect((await store.list())[0]).toMatchObject({ id: 's1', status: 'interrupted' });
    // A writer in this process takes the dead one's lock over: the session is live again.
    await store.openWriter('s1');
    expect((await store.list())[0]).toMatchObject({ id: 's1', status: 'running' });
    await store.close();
  });

  it('a run closed by its own process (the store closed without run.ended) is interrupted too', async () => {
    const dir = await tempDir();
    const store = await openFileStore(dir, quiet);
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created(), s.runStarted()], { expectedSeq: 0 });
    expect((await store.list())[0]?.status).toBe('running');
    await store.close();
    const again = await openFileStore(dir, quiet);
    expect((await again.list())[0]?.status).toBe('interrupted');
    await again.close();
  });
});

describe('a stale lock', () => {
  /** A process that stays alive until killed: its pid is "in use". */
  async function liveProcess() {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
    await once(child, 'spawn');
    return child;
  }

  async function sessionWithLock(owner: Record<string, unknown>) {
    const dir = await tempDir();
    const store = await openFileStore(dir, quiet);
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created()], { expectedSeq: 0 });
    await store.close();
    await writeFile(
      lockFile(dir, 's1'),
      `${JSON.stringify({ host: hostname(), token: 't', at: 1, ...owner })}\n`,
    );
    return { dir, next: s.user('after') };
  }

  it.runIf(process.platform === 'linux')(
    'whose pid was reused by another process (its start time differs) is taken over',
    async () => {
      const other = await liveProcess();
      try {
        const { dir, next } = await sessionWithLock({ pid: other.pid, start: '1' });
        const store = await openFileStore(dir, quiet);
        await store.append('s1', [next], { expectedSeq: 1 });
        expect(await readFile(lockFile(dir, 's1'), 'utf8')).toContain(`"pid":${process.pid}`);
        await store.close();
      } finally {
        other.kill('SIGKILL');
      }
    },
  );

  it('held by a live process: SessionLockedError names the holder and the file to remove if it is gone', async () => {
    const other = await liveProcess();
    try {
      const start = processStart(other.pid!);
      const { dir, next } = await sessionWithLock({ pid: other.pid, ...(start ? { start } : {}) });
      const store = await openFileStore(dir, quiet);
      const err = await store.append('s1', [next], { expectedSeq: 1 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SessionLockedError);
      expect(err).toMatchObject({ lockPath: lockFile(dir, 's1') });
      expect((err as Error).message).toContain(`pid ${other.pid} on ${hostname()}`);
      expect((err as Error).message).toContain(
        `if no reloop process is writing this session any more, remove ${lockFile(dir, 's1')} and try again`,
      );
      expect((await store.list())[0]?.status).not.toBe('interrupted');
      await store.close();
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('held from another host: reported as such, never broken', async () => {
    const { dir, next } = await sessionWithLock({ pid: 1, host: 'elsewhere.example' });
    const store = await openFileStore(dir, quiet);
    const err = await store.append('s1', [next], { expectedSeq: 1 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SessionLockedError', foreignHost: true });
    expect((err as Error).message).toMatch(
      /on another host: whether it still runs cannot be checked from here/,
    );
    await store.close();
  });
});
