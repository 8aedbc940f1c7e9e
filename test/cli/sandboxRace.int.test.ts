import { readdirSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedRun, type ToolCall } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

/**
 * Item 4: a symlink swapped between "inside" and "outside" while the tools run. Checking a path
 * and then opening it again by name read and created files outside cwd; opening once and checking
 * what was opened must leak nothing, however the swaps fall.
 */

let root: string;
let proj: string;
let work: string;
const SECRET = 'OUTSIDE-SECRET-7f3a';

beforeAll(async () => {
  root = await tempDir('reloop-race-');
  proj = path.join(root, 'proj');
  work = path.join(root, 'work');
  await mkdir(path.join(proj, 'inside'), { recursive: true });
  await mkdir(path.join(root, 'outside'));
  await writeFile(path.join(proj, 'inside', 'f.txt'), 'inside\n');
  await writeFile(path.join(root, 'outside', 'f.txt'), `${SECRET}\n`);
});
afterAll(() => removeDir(root));

/** Swaps proj/link between inside/ and ../outside as fast as the event loop allows, until stopped. */
function swapLoop(): { stop: () => Promise<number> } {
  const link = path.join(proj, 'link');
  const targets = [path.join(proj, 'inside'), path.join(root, 'outside')];
  const tmp = path.join(proj, '.link.tmp');
  let swaps = 0;
  let running = true;
  const step = () => {
    if (!running) return;
    // An odd or even burst at random: between bursts the link points either way, not always the same.
    const burst = 1 + Math.floor(Math.random() * 20);
    for (let k = 0; k < burst; k++) {
      try {
        unlinkSync(tmp);
      } catch {
        // not there
      }
      symlinkSync(targets[swaps % 2] as string, tmp);
      renameSync(tmp, link); // atomic: the name always points somewhere
      swaps++;
    }
    setImmediate(step);
  };
  rmSync(link, { force: true });
  symlinkSync(targets[0] as string, link);
  setImmediate(step);
  return {
    stop: async () => {
      running = false;
      await new Promise((r) => setImmediate(r));
      return swaps;
    },
  };
}

function batches(n: number, size: number, call: (i: number) => ToolCall): ToolCall[][] {
  return Array.from({ length: n }, (_, b) => Array.from({ length: size }, (_, k) => call(b * size + k)));
}

describe('check-then-use races (item 4)', () => {
  it(
    'Read through a symlink swapped in a loop never returns the outside file',
    { timeout: 180_000 },
    async () => {
      // Many turns: each batch is admitted at another moment of the swapping.
      const reads: ToolCall[][] = batches(20, 20, () => ({
        name: 'Read',
        input: { file_path: 'link/f.txt' },
      }));
      const swapper = swapLoop();
      let run: Awaited<ReturnType<typeof scriptedRun>>;
      try {
        run = await scriptedRun(reads, {
          cwd: proj,
          work,
          args: ['--permission-mode', 'plan'],
          timeoutMs: 150_000,
        });
      } finally {
        const swaps = await swapper.stop();
        expect(swaps).toBeGreaterThan(400);
      }
      const results = [...run.results().values()];
      const leaks = results.filter((r) => r.content.includes(SECRET)).length;
      const inside = results.filter((r) => !r.isError && r.content.includes('inside')).length;
      expect(leaks).toBe(0);
      // Some reads must have been allowed and succeeded, or nothing was raced.
      expect(inside).toBeGreaterThan(0);
      expect(run.logText).not.toContain(SECRET);
    },
  );

  it(
    'Write through a symlink swapped in a loop never creates a file outside',
    { timeout: 180_000 },
    async () => {
      const writes = batches(20, 10, (i) => ({
        name: 'Write',
        input: { file_path: `link/new-${i}.txt`, content: 'x\n' },
      }));
      const swapper = swapLoop();
      let run: Awaited<ReturnType<typeof scriptedRun>>;
      try {
        run = await scriptedRun(writes, {
          cwd: proj,
          work,
          args: ['--permission-mode', 'acceptEdits'],
          timeoutMs: 150_000,
        });
      } finally {
        await swapper.stop();
      }
      const created = readdirSync(path.join(root, 'outside')).filter((f) => f.startsWith('new-'));
      expect(created).toEqual([]);
      const ok = [...run.results().values()].filter((r) => !r.isError).length;
      expect(ok).toBeGreaterThan(0);
      expect(readdirSync(path.join(proj, 'inside')).filter((f) => f.startsWith('new-')).length).toBe(ok);
    },
  );
});
