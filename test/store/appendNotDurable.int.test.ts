/**
 * `append(…, { durable: false })`: the records are in the stream for every reader at once, the
 * call does not wait for fdatasync, and the next durable append syncs them with its own.
 */
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it, vi } from 'vitest';
import { openFileStore } from '../../src/store/fileStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { StreamBuilder } from './support/records.ts';

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('a non-durable append is readable at once and skips the fdatasync; a durable one syncs', async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-not-durable-'));
  const probe = await open(path.join(dir, 'probe'), 'w');
  const datasync = vi.spyOn(Object.getPrototypeOf(probe), 'datasync');
  await probe.close();
  const store = await openFileStore(dir);
  try {
    const s = new StreamBuilder('s1');
    const first = [s.created('t'), s.runStarted()];
    await store.append('s1', first, { expectedSeq: 0 });
    expect(datasync).toHaveBeenCalledTimes(1);
    const second = [s.user('hi')];
    await store.append('s1', second, { expectedSeq: 2, durable: false });
    expect(datasync).toHaveBeenCalledTimes(1);
    // Another reader of the store sees them already.
    const reader = await openFileStore(dir);
    const seen: LogRecord[] = [];
    for await (const r of reader.read('s1')) seen.push(r);
    await reader.close();
    expect(seen.map((r) => r.seq)).toEqual([1, 2, 3]);
    await store.append('s1', [s.transition()], { expectedSeq: 3 });
    expect(datasync).toHaveBeenCalledTimes(2);
  } finally {
    datasync.mockRestore();
    await store.close();
  }
});
