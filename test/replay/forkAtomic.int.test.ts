import { watch } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { collect, StreamBuilder } from '../store/support/records.ts';
import { startWorker } from '../store/support/startWorker.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

/** A store holding one large session `src` (~24 MB, 240 records), closed again. */
async function largeSession(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'reloop-fork-'));
  dirs.push(dir);
  const store = await openFileStore(dir, { onWarning: () => undefined });
  const s = new StreamBuilder('src');
  const records: LogRecord[] = [s.created('large')];
  for (let i = 0; i < 239; i++) records.push(s.user(`${i} ${'x'.repeat(100_000)}`));
  await store.append('src', records, { expectedSeq: 0 });
  await store.close();
  return dir;
}

/** What a later `sessions` sees: the rows listed, and the files left in the sessions directory. */
async function aftermath(dir: string) {
  const store = await openFileStore(dir, { onWarning: () => undefined });
  const rows = await store.list();
  const forks = rows.filter((r) => r.id !== 'src');
  // A fork that is listed must be whole: every record of the source, sealed, verifying.
  for (const f of forks) {
    expect(f.lastSeq).toBe(240);
    const copy = await collect(store.read(f.id));
    expect((await verifyReplay(copy)).divergence).toBeNull();
  }
  await store.close();
  return { rows: rows.map((r) => r.id).sort(), files: (await readdir(join(dir, 'sessions'))).sort() };
}

describe('fork is atomic: a fork killed half-way leaves nothing listed and no lock', () => {
  it('killed while copying the records (deterministic: after 150 of 240)', async () => {
    const dir = await largeSession();
    const worker = startWorker('fork', dir, 'src', '150');
    expect(await worker.next()).toMatchObject({ forking: true });
    expect(await worker.exit).toEqual({ code: null, signal: 'SIGKILL' });
    const before = await readdir(join(dir, 'sessions'));
    // What the kill left: at most a temporary file, never a stream or a lock of the fork.
    expect(before.filter((f) => f.startsWith('fork-'))).toEqual([]);
    const after = await aftermath(dir);
    expect(after.rows).toEqual(['src']);
    // The dead fork's temporary file is gone once someone lists the store.
    expect(after.files).toEqual(['src.jsonl']);
  });

  it('killed the moment the fork touches the sessions directory (on main: a lock and a torn stream)', async () => {
    const dir = await largeSession();
    const sessions = join(dir, 'sessions');
    const worker = startWorker('fork', dir, 'src');
    const watcher = watch(sessions, (_event, name) => {
      if (name && !name.startsWith('src')) worker.child.kill('SIGKILL');
    });
    try {
      expect(await worker.next()).toMatchObject({ forking: true });
      // Whether the kill lands mid-write or after the fork is done, the outcome must be clean.
      expect((await worker.exit).signal).toBe('SIGKILL');
    } finally {
      watcher.close();
    }
    const after = await aftermath(dir);
    expect(after.files.filter((f) => f.endsWith('.lock') || f.endsWith('.tmp'))).toEqual([]);
    expect(after.files.filter((f) => f.endsWith('.jsonl'))).toEqual(
      after.rows.map((id) => `${id}.jsonl`).sort(),
    );
  });
});
