import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InvalidRecordError } from '../../src/store/errors.ts';
import { type FileEventStore, openFileStore } from '../../src/store/fileStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { StreamBuilder } from './support/records.ts';

/**
 * Following a file store stream from a second store on the same directory (as `reloop log
 * --follow` does while `reloop run` writes): it sees every commit, and a write caught half
 * way — or a crash's torn tail that the next writer cuts — neither shows nor repeats a record.
 */
describe('FileEventStore.follow of a stream another store writes', () => {
  let dir: string;
  let writer: FileEventStore;
  let reader: FileEventStore;
  let stop: AbortController;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'reloop-follow-'));
    writer = await openFileStore(dir, { onWarning: () => undefined });
    reader = await openFileStore(dir, { onWarning: () => undefined });
    stop = new AbortController();
  });
  afterEach(async () => {
    stop.abort();
    await Promise.all([writer.close(), reader.close()]);
    await rm(dir, { recursive: true, force: true });
  });

  const file = (session: string) => join(dir, 'sessions', `${session}.jsonl`);
  const follow = (session: string, afterSeq = 0): AsyncIterator<LogRecord> =>
    reader.follow(session, { afterSeq, signal: stop.signal })[Symbol.asyncIterator]();
  const next = async (it: AsyncIterator<LogRecord>) => {
    const n = await it.next();
    return n.done ? 'done' : n.value.seq;
  };

  it('sees each commit of the other store as it lands', async () => {
    const s = new StreamBuilder('s1');
    await writer.append('s1', [s.created(), s.runStarted()], { expectedSeq: 0 });
    const it = follow('s1', 1);
    expect(await next(it)).toBe(2);
    const pending = next(it);
    await writer.append('s1', [s.user('hello')], { expectedSeq: 2 });
    expect(await pending).toBe(3);
  });

  it('skips a line still being written, and yields it once its newline lands', async () => {
    const s = new StreamBuilder('s1');
    await writer.append('s1', [s.created()], { expectedSeq: 0 });
    const it = follow('s1');
    expect(await next(it)).toBe(1);
    const line = JSON.stringify(s.user('half'));
    const pending = next(it);
    await appendFile(file('s1'), line.slice(0, 20));
    await appendFile(file('s1'), `${line.slice(20)}\n`);
    expect(await pending).toBe(2);
  });

  it('waits at a torn tail, and reads on without repeats once the next writer has cut it', async () => {
    const s = new StreamBuilder('s1');
    await writer.append('s1', [s.created(), s.user('a')], { expectedSeq: 0 });
    await writer.closeWriter('s1');
    // What a crash leaves: a last line without its newline (a complete bad line is corruption, never cut).
    await appendFile(file('s1'), '\0\0\0garbage from a crash');
    const it = follow('s1');
    expect(await next(it)).toBe(1);
    expect(await next(it)).toBe(2);
    const pending = next(it);
    // A new writer cuts the torn tail (the file shrinks), then appends.
    await writer.append('s1', [s.user('b')], { expectedSeq: 2 });
    expect(await pending).toBe(3);
  });

  it('fails with the file and line when a complete line in the middle is not a record', async () => {
    const s = new StreamBuilder('s1');
    await writer.append('s1', [s.created()], { expectedSeq: 0 });
    await writer.closeWriter('s1');
    await appendFile(file('s1'), `not json\n${JSON.stringify(s.user('after'))}\n`);
    const it = follow('s1');
    expect(await next(it)).toBe(1);
    const error = await it.next().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidRecordError);
    expect(String(error)).toContain('line 2');
  });
});
