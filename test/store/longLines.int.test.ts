import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openFileStore } from '../../src/store/fileStore.ts';
import { collect, StreamBuilder } from './support/records.ts';

/*
 * Reading a long line costs time linear in its length. Timing is noisy here, so the tests count
 * the work instead: the bytes the store copies while joining the pieces of a line (Buffer.concat).
 * Joining the pieces on every chunk (the old reader) copies O(n²/chunk) bytes: 8.5× a 4 MB line,
 * 32× a 16 MB one; joining once copies the line once.
 */

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});
afterEach(() => vi.restoreAllMocks());

async function storeWithLine(bytes: number) {
  const dir = await mkdtemp(join(tmpdir(), 'reloop-long-'));
  dirs.push(dir);
  const store = await openFileStore(dir, { onWarning: () => undefined });
  const s = new StreamBuilder('long');
  await store.append('long', [s.created(), s.user('x'.repeat(bytes)), s.transition()], { expectedSeq: 0 });
  await store.close();
  // The last line is the long one too, for the writer's backwards scan of the tail.
  const again = await openFileStore(dir, { onWarning: () => undefined });
  await again.append('long', [s.user('y'.repeat(bytes))], { expectedSeq: 3 });
  await again.close();
  return dir;
}

/** Bytes Buffer.concat produced while `f` ran. */
async function copiedBy(f: () => Promise<unknown>): Promise<number> {
  let copied = 0;
  const concat = Buffer.concat;
  vi.spyOn(Buffer, 'concat').mockImplementation((list, total) => {
    const out = concat(list, total);
    copied += out.length;
    return out;
  });
  await f();
  vi.restoreAllMocks();
  return copied;
}

describe('long lines are read in linear time', () => {
  it.each([4, 16])('a %d MB line: reading the stream copies it about once', async (mb) => {
    const bytes = mb * 1024 * 1024;
    const dir = await storeWithLine(bytes);
    const store = await openFileStore(dir, { onWarning: () => undefined });
    let records: unknown[] = [];
    const copied = await copiedBy(async () => {
      records = await collect(store.read('long'));
    });
    expect(records).toHaveLength(4);
    // Two long lines in the stream: each joined once, never re-copied per chunk.
    expect(copied).toBeLessThan(2 * bytes * 1.1);
    await store.close();
  });

  it.each([4, 16])('a %d MB last line: opening a writer (tail scan) copies it about once', async (mb) => {
    const bytes = mb * 1024 * 1024;
    const dir = await storeWithLine(bytes);
    const store = await openFileStore(dir, { onWarning: () => undefined });
    const copied = await copiedBy(() => store.openWriter('long'));
    expect(await store.lastSeq('long')).toBe(4);
    expect(copied).toBeLessThan(bytes * 1.1);
    await store.close();
  });

  it('a 16 MB line: following the stream (log --follow) copies it about once', async () => {
    const bytes = 16 * 1024 * 1024;
    const dir = await storeWithLine(bytes);
    const store = await openFileStore(dir, { onWarning: () => undefined });
    const stop = new AbortController();
    let seen = 0;
    const copied = await copiedBy(async () => {
      for await (const _ of store.follow('long', { afterSeq: 0, signal: stop.signal })) {
        if (++seen === 4) stop.abort();
      }
    });
    expect(seen).toBe(4);
    expect(copied).toBeLessThan(2 * bytes * 1.1);
    await store.close();
  });
});
