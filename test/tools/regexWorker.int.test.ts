import { describe, expect, it } from 'vitest';
import { matchInWorker, RegexAbortedError, RegexTimeoutError } from '../../src/tools/regexWorker.ts';

const file = (index: number, text: string) => ({ index, data: Buffer.from(text) });

describe('matchInWorker', () => {
  it('reports matching lines per file, counted exactly, cut at 500 characters', async () => {
    const long = `x${'y'.repeat(600)}`;
    const out = await matchInWorker(
      'x',
      '',
      [file(0, 'ax\nb\r\ncx\n'), file(1, 'none\n'), file(2, long)],
      5000,
      new AbortController().signal,
    );
    expect(out).toEqual([
      {
        index: 0,
        count: 2,
        lines: [
          { n: 1, text: 'ax' },
          { n: 3, text: 'cx' },
        ],
      },
      { index: 2, count: 1, lines: [{ n: 1, text: `${long.slice(0, 500)}…` }] },
    ]);
  });

  it('gives up on a catastrophic pattern at its deadline, and the next job still works', async () => {
    const evil = file(0, `${'a'.repeat(40)}!\n`);
    const e = await matchInWorker('(a+)+$', '', [evil], 200, new AbortController().signal).catch(
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(RegexTimeoutError);
    expect(await matchInWorker('a!', '', [evil], 5000, new AbortController().signal)).toHaveLength(1);
  });

  it('stops when its signal is aborted', async () => {
    const ac = new AbortController();
    const p = matchInWorker('(a+)+$', '', [file(0, `${'a'.repeat(40)}!`)], 60_000, ac.signal);
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(RegexAbortedError);
  });
});
