import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  InvalidRecordError,
  SchemaVersionError,
  SessionLockedError,
  SessionNotFoundError,
} from '../../src/store/errors.ts';
import {
  type FileEventStore,
  fdatasyncLatency,
  openFileStore,
  type StoreWarning,
} from '../../src/store/fileStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { exists } from '../support/files.ts';
import { testEventStore } from './eventStoreContract.ts';
import { testFollow } from './followContract.ts';
import { collect, StreamBuilder, sealed, sealedLines } from './support/records.ts';
import { startWorker } from './support/startWorker.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'reloop-store-'));
  dirs.push(dir);
  return dir;
}

testEventStore('FileEventStore', async () => openFileStore(await tempDir(), { onWarning: () => undefined }));
testFollow('FileEventStore', async () => openFileStore(await tempDir(), { onWarning: () => undefined }));

/** A store in a fresh directory plus the warnings it reported. */
async function fixture(
  dir?: string,
): Promise<{ dir: string; store: FileEventStore; warnings: StoreWarning[] }> {
  const d = dir ?? (await tempDir());
  const warnings: StoreWarning[] = [];
  const store = await openFileStore(d, { onWarning: (w) => warnings.push(w) });
  return { dir: d, store, warnings };
}

const streamFile = (dir: string, session: string) => join(dir, 'sessions', `${session}.jsonl`);
const lockFile = (dir: string, session: string) => join(dir, 'sessions', `${session}.lock`);
const line = (r: unknown) => `${JSON.stringify(r)}\n`;

/** Writes a session's stream by hand, one given line per entry (for corrupt files). */
async function writeStream(dir: string, session: string, lines: string[]): Promise<string> {
  const { store } = await fixture(dir);
  await store.close();
  const file = streamFile(dir, session);
  await writeFile(file, lines.join(''));
  return file;
}

function records(session: string, n: number): LogRecord[] {
  const s = new StreamBuilder(session);
  return [s.created('t'), ...s.transitions(n - 1)];
}

describe('FileEventStore on disk', () => {
  it.runIf(process.platform === 'linux')(
    'a store directory that refuses children fails at once naming the path (recursive mkdir looped forever on /proc)',
    async () => {
      await expect(openFileStore('/proc')).rejects.toThrow(/ENOENT.*\/proc\/sessions/);
    },
  );

  it('keeps streams and the catalog across close and reopen', async () => {
    const first = await fixture();
    const s = new StreamBuilder('s1');
    const batch = [s.created('persisted'), s.user('hello'), s.runStarted()];
    await first.store.append('s1', batch, { expectedSeq: 0 });
    const rows = await first.store.list();
    await first.store.close();

    const text = await readFile(streamFile(first.dir, 's1'), 'utf8');
    expect(text.split('\n')).toEqual([...sealedLines(batch), '']);
    expect(await exists(join(first.dir, 'catalog.json'))).toBe(true);

    const second = await fixture(first.dir);
    expect(await collect(second.store.read('s1'))).toEqual(sealed(batch));
    expect(await second.store.lastSeq('s1')).toBe(3);
    // The run never ended and its writer has gone (the store was closed): interrupted, not running.
    expect(rows[0]?.status).toBe('running');
    expect(await second.store.list()).toEqual(rows.map((r) => ({ ...r, status: 'interrupted' })));
    const next = s.transition();
    await expect(second.store.append('s1', [next], { expectedSeq: 0 })).rejects.toMatchObject({
      name: 'ConcurrencyError',
      actualSeq: 3,
    });
    await second.store.append('s1', [next], { expectedSeq: 3 });
    expect(await second.store.lastSeq('s1')).toBe(4);
    await second.store.close();
    expect(second.warnings).toEqual([]);
  });

  it('handles records larger than a read chunk and streams longer than one', async () => {
    const { store } = await fixture();
    const s = new StreamBuilder('big');
    const created = s.created();
    const huge = s.user('x'.repeat(700_000));
    await store.append('big', [created, huge, ...s.transitions(20_000)], { expectedSeq: 0 });
    await store.close();
    const again = await fixture(store.dir);
    const read = await collect(again.store.read('big'));
    expect(read).toHaveLength(20_002);
    expect(read[1]).toEqual(sealed([created, huge])[1]);
    expect(read.map((r) => r.seq).every((seq, i) => seq === i + 1)).toBe(true);
    await again.store.append('big', [s.transition(), s.user('y'.repeat(600_000))], { expectedSeq: 20_002 });
    await again.store.close();
    // The last line now spans several read chunks: the tail scan must walk back over all of them.
    const third = await fixture(store.dir);
    expect(await third.store.lastSeq('big')).toBe(20_004);
    await third.store.append('big', [s.transition()], { expectedSeq: 20_004 });
    expect((await collect(third.store.read('big', { fromSeq: 20_004 })))[0]).toMatchObject({
      type: 'user.message',
    });
    await third.store.close();
    expect(third.warnings).toEqual([]);
  });

  it('reports a torn last line on read, then cuts it when a writer opens and continues at the right seq', async () => {
    const { dir, store, warnings } = await fixture();
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created(), s.user('a'), s.transition()], { expectedSeq: 0 });
    await store.close();
    const file = streamFile(dir, 's1');
    const torn = line(new StreamBuilder('s1', { seq: 3 }).transition()).slice(0, 40);
    await appendFile(file, torn);
    const sizeWithTornLine = (await stat(file)).size;

    const reopened = await fixture(dir);
    expect((await collect(reopened.store.read('s1'))).map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(reopened.warnings).toMatchObject([{ code: 'torn_tail', file, line: 4 }]);
    expect(await reopened.store.lastSeq('s1')).toBe(3);
    expect((await stat(file)).size).toBe(sizeWithTornLine); // a reader never cuts

    await reopened.store.append('s1', [s.transition()], { expectedSeq: 3 });
    expect(reopened.warnings.at(-1)).toMatchObject({ code: 'torn_tail_cut', file, line: 4 });
    expect(reopened.warnings.at(-1)?.message).toContain('line 4');
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(5);
    expect(lines.slice(0, 4).map((l) => (JSON.parse(l) as LogRecord).seq)).toEqual([1, 2, 3, 4]);
    await reopened.store.close();
    expect(warnings).toEqual([]);
  });

  it('cuts only an unterminated last line (zeros left by a crash), never a complete one', async () => {
    const dir = await tempDir();
    const rs = records('s1', 3);
    const file = await writeStream(dir, 's1', [...rs.map(line), '\0\0\0\0']);
    const { store, warnings } = await fixture(dir);
    await store.openWriter('s1');
    expect(warnings).toMatchObject([{ code: 'torn_tail_cut', line: 4 }]);
    expect(await readFile(file, 'utf8')).toBe(rs.map(line).join(''));
    expect(await store.lastSeq('s1')).toBe(3);
    await store.close();
  });

  it('reports a complete but corrupt last line as corruption naming file and line, and never cuts it', async () => {
    const dir = await tempDir();
    const rs = records('s1', 3);
    // A fully written last line (newline and all) whose bytes went bad: not something a crash leaves.
    const corrupt = `${line(rs[2]).slice(0, 30)}#${line(rs[2]).slice(31)}`;
    const file = await writeStream(dir, 's1', [line(rs[0]), line(rs[1]), corrupt]);
    const before = await readFile(file, 'utf8');
    const { store, warnings } = await fixture(dir);
    const onOpen = await store.openWriter('s1').catch((e: unknown) => e);
    expect(onOpen).toBeInstanceOf(InvalidRecordError);
    expect((onOpen as Error).message).toContain(`${file}, line 3`);
    expect((onOpen as Error).message).toMatch(/corrupt, not torn/);
    const onRead = await collect(store.read('s1')).catch((e: unknown) => e);
    expect(onRead).toMatchObject({ name: 'InvalidRecordError', where: { file, line: 3 } });
    await expect(store.lastSeq('s1')).rejects.toBeInstanceOf(InvalidRecordError);
    expect(await readFile(file, 'utf8')).toBe(before);
    expect(warnings.filter((w) => w.code === 'torn_tail_cut' || w.code === 'torn_tail')).toEqual([]);
    expect(await exists(lockFile(dir, 's1'))).toBe(false);
    await store.close();
  });

  it('recovers a stream whose very first write was torn', async () => {
    const dir = await tempDir();
    const s = new StreamBuilder('s1');
    const first = s.created();
    const file = await writeStream(dir, 's1', [line(first).slice(0, 30)]);
    const { store, warnings } = await fixture(dir);
    expect(await store.lastSeq('s1')).toBe(0);
    await store.append('s1', [first], { expectedSeq: 0 });
    expect(warnings.map((w) => [w.code, w.line])).toEqual([
      ['torn_tail', 1],
      ['torn_tail_cut', 1],
    ]);
    expect(await readFile(file, 'utf8')).toBe(`${sealedLines([first])[0]}\n`);
    await store.close();
  });

  it('throws with the line number on garbage in the middle of a stream, never skipping it', async () => {
    const dir = await tempDir();
    const rs = records('s1', 5);
    const lines = rs.map(line);
    lines[2] = '\u0000\u00ff{garbage\n';
    const file = await writeStream(dir, 's1', lines);
    const { store } = await fixture(dir);
    const seen: number[] = [];
    const err = await (async () => {
      for await (const r of store.read('s1')) seen.push(r.seq);
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect(err).toMatchObject({ where: { file, line: 3 } });
    expect((err as Error).message).toContain('line 3');
    expect(seen).toEqual([1, 2]); // the good records before it still arrive, in order
    await store.close();
  });

  it('throws on a seq gap in the file, naming the line and the seq', async () => {
    const dir = await tempDir();
    const rs = records('s1', 4);
    const file = await writeStream(dir, 's1', [rs[0], rs[1], rs[3]].map(line));
    const { store } = await fixture(dir);
    const err = await collect(store.read('s1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect(err).toMatchObject({ where: { file, line: 3, seq: 4 } });
    await store.close();
  });

  it('throws InvalidRecordError with the line for a record failing its schema on disk', async () => {
    const dir = await tempDir();
    const rs = records('s1', 3);
    const bad = { ...rs[1], data: { from: 1 } };
    const file = await writeStream(dir, 's1', [rs[0], bad, rs[2]].map(line));
    const { store } = await fixture(dir);
    await expect(collect(store.read('s1'))).rejects.toMatchObject({
      name: 'InvalidRecordError',
      where: { file, line: 2, seq: 2 },
    });
    await store.close();
  });

  it('throws SchemaVersionError with the line for a wrong-version record, and never cuts one at the end', async () => {
    const dir = await tempDir();
    const rs = records('s1', 3);
    const file = await writeStream(dir, 's1', [rs[0], { ...rs[1], v: 7 }, rs[2]].map(line));
    const { store } = await fixture(dir);
    const err = await collect(store.read('s1')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect(err).toMatchObject({ version: 7, where: { file, line: 2 } });

    const tailFile = await writeStream(
      dir,
      's2',
      [rs[0], rs[1], { ...rs[2], v: 7 }].map((r) => line({ ...r, session: 's2' })),
    );
    const before = await readFile(tailFile, 'utf8');
    await expect(collect(store.read('s2'))).rejects.toBeInstanceOf(SchemaVersionError);
    const onOpen = await store.openWriter('s2').catch((e: unknown) => e);
    expect(onOpen).toBeInstanceOf(SchemaVersionError);
    expect(onOpen).toMatchObject({ version: 7, where: { file: tailFile, line: 3 } });
    expect(await readFile(tailFile, 'utf8')).toBe(before);
    expect(await exists(lockFile(dir, 's2'))).toBe(false); // a failed open gives the lock back
    await store.close();
    expect(file).not.toBe(tailFile);
  });

  it('finds lastSeq and opens a writer from the tail alone, without reading the whole stream', async () => {
    const dir = await tempDir();
    const rs = records('s1', 50);
    const lines = rs.map(line);
    lines[10] = `${'#'.repeat(lines[10]!.length - 1)}\n`; // corrupt, same length: only a full read notices
    await writeStream(dir, 's1', lines);
    const { store } = await fixture(dir);
    expect(await store.lastSeq('s1')).toBe(50);
    await store.append('s1', [new StreamBuilder('s1', { seq: 50 }).transition()], { expectedSeq: 50 });
    expect(await store.lastSeq('s1')).toBe(51);
    await expect(collect(store.read('s1'))).rejects.toMatchObject({ where: { line: 11 } });
    await store.close();
  });

  it('rebuilds the catalog from the streams when catalog.json is deleted or unreadable', async () => {
    const { dir, store } = await fixture();
    const a = new StreamBuilder('a');
    const b = new StreamBuilder('b');
    await store.append('a', [a.created('alpha'), a.runStarted(), a.runEnded()], { expectedSeq: 0 });
    await store.append('b', [b.created(), b.user('beta task')], { expectedSeq: 0 });
    const rows = await store.list();
    await store.close();
    const catalogFile = join(dir, 'catalog.json');

    await rm(catalogFile);
    const rebuilt = await fixture(dir);
    expect(await rebuilt.store.list()).toEqual(rows);
    await rebuilt.store.close();
    const saved = JSON.parse(await readFile(catalogFile, 'utf8')) as { sessions: Record<string, unknown> };
    expect(Object.keys(saved.sessions).sort()).toEqual(['a', 'b']);

    await writeFile(catalogFile, '{ not json');
    const repaired = await fixture(dir);
    expect(await repaired.store.list()).toEqual(rows);
    expect(repaired.warnings).toMatchObject([{ code: 'catalog_unreadable' }]);
    await repaired.store.close();
  });

  it('repairs a catalog row whose stream grew behind its back', async () => {
    const { dir, store } = await fixture();
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created('t'), s.runStarted()], { expectedSeq: 0 });
    await store.close();
    await appendFile(
      streamFile(dir, 's1'),
      [s.transition(), s.runEnded('aborted', 'aborted')].map(line).join(''),
    );
    const { store: again } = await fixture(dir);
    expect(await again.list()).toMatchObject([{ id: 's1', status: 'aborted', lastSeq: 4, updated: s.at }]);
    await again.close();
  });

  it('coalesces catalog writes instead of rewriting catalog.json on every append', async () => {
    const dir = await tempDir();
    const store = await openFileStore(dir, { onWarning: () => undefined, catalogFlushMs: 60_000 });
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created()], { expectedSeq: 0 });
    for (let i = 0; i < 50; i++) await store.append('s1', [s.transition()], { expectedSeq: s.seq - 1 });
    expect(store.catalogWrites).toBe(0);
    await store.close();
    expect(store.catalogWrites).toBe(1);
  });

  it('refuses session ids that are not plain file names', async () => {
    const { dir, store } = await fixture();
    const s = new StreamBuilder('../escape');
    await expect(store.append('../escape', [s.created()], { expectedSeq: 0 })).rejects.toBeInstanceOf(
      InvalidRecordError,
    );
    expect(await store.exists('../escape')).toBe(false);
    await expect(collect(store.read('../escape'))).rejects.toBeInstanceOf(SessionNotFoundError);
    expect(await exists(join(dir, 'escape.jsonl'))).toBe(false);
    await store.close();
  });

  it('measures fdatasync latency', async () => {
    const lat = await fdatasyncLatency(await tempDir(), 5);
    expect(lat.samples).toBe(5);
    expect(lat.medianMs).toBeGreaterThan(0);
    expect(lat.maxMs).toBeGreaterThanOrEqual(lat.p99Ms);
  });
});

describe('FileEventStore writer lock', () => {
  it('allows one writer per session in a process; closing gives the lock back', async () => {
    const { dir, store } = await fixture();
    const other = await openFileStore(dir, { onWarning: () => undefined });
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created()], { expectedSeq: 0 });
    const next = s.user('x');
    const err = await other.append('s1', [next], { expectedSeq: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionLockedError);
    expect((err as SessionLockedError).holder).toContain(`pid ${process.pid}`);
    expect(await other.lastSeq('s1')).toBe(1); // readers need no lock
    await store.close();
    expect(await exists(lockFile(dir, 's1'))).toBe(false);
    await other.append('s1', [next], { expectedSeq: 1 });
    await other.close();
  });

  it('takes the lock with openWriter before any record exists, without creating the stream', async () => {
    const { dir, store } = await fixture();
    await store.openWriter('new');
    expect(await store.exists('new')).toBe(false);
    expect(await exists(streamFile(dir, 'new'))).toBe(false);
    const other = await openFileStore(dir, { onWarning: () => undefined });
    await expect(other.openWriter('new')).rejects.toBeInstanceOf(SessionLockedError);
    await other.close();
    await store.close();
  });

  it('makes a writer in another process fail with SessionLockedError, leaving the stream intact', async () => {
    const { dir, store } = await fixture();
    const s = new StreamBuilder('s1');
    await store.append('s1', [s.created(), s.user('mine')], { expectedSeq: 0 });
    const before = await readFile(streamFile(dir, 's1'), 'utf8');
    const worker = startWorker('append', dir, 's1');
    expect(await worker.next()).toMatchObject({ error: 'SessionLockedError', code: 'SESSION_LOCKED' });
    expect((await worker.next()).closed).toBe(true);
    expect(await worker.exit).toEqual({ code: 0, signal: null });
    expect(await readFile(streamFile(dir, 's1'), 'utf8')).toBe(before);
    await store.append('s1', [s.transition()], { expectedSeq: 2 });
    await store.close();
  });

  it('refuses this process while another holds the lock, and lets it write once released', async () => {
    const { dir, store } = await fixture();
    const worker = startWorker('hold', dir, 's1');
    expect(await worker.next()).toMatchObject({ ready: true, lastSeq: 3 });
    const s = new StreamBuilder('s1', { seq: 3 });
    const next = s.transition();
    const err = await store.append('s1', [next], { expectedSeq: 3 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SessionLockedError);
    expect((err as SessionLockedError).holder).toContain(`pid ${worker.pid}`);
    expect((await collect(store.read('s1'))).map((r) => r.seq)).toEqual([1, 2, 3]);
    worker.child.stdin?.end();
    expect((await worker.next()).closed).toBe(true);
    await worker.exit;
    await store.append('s1', [next], { expectedSeq: 3 });
    const lines = (await readFile(streamFile(dir, 's1'), 'utf8')).trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as LogRecord).seq)).toEqual([1, 2, 3, 4]);
    await store.close();
  });

  it('takes over the lock of a writer killed without cleanup (stale pid)', async () => {
    const { dir, store } = await fixture();
    const worker = startWorker('crash', dir, 's1');
    expect(await worker.next()).toMatchObject({ ready: true, lastSeq: 3 });
    expect(await worker.exit).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await exists(lockFile(dir, 's1'))).toBe(true);
    const s = new StreamBuilder('s1', { seq: 3 });
    await store.append('s1', [s.transition()], { expectedSeq: 3 });
    expect(await readFile(lockFile(dir, 's1'), 'utf8')).toContain(`"pid":${process.pid}`);
    await store.close();
  });

  it('releases the lock when a writer process exits without closing the store', async () => {
    const { dir, store } = await fixture();
    const worker = startWorker('exit', dir, 's1');
    expect(await worker.next()).toMatchObject({ ready: true });
    expect(await worker.exit).toEqual({ code: 0, signal: null });
    expect(await exists(lockFile(dir, 's1'))).toBe(false);
    expect(await store.lastSeq('s1')).toBe(3);
    await store.close();
  });
});
