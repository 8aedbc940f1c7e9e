import { readFileSync, watch } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processGroupAlive } from '../../src/tools/processGroup.ts';
import { scriptedRun, startScriptedRun } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

/**
 * Items 5 and 8: a run stays in control of itself. A catastrophic regex cannot pin the process
 * (the Grep gives up, Ctrl-C still works), and SIGTERM and SIGHUP end a run like Ctrl-C: the abort
 * is logged and the Bash process group is killed.
 */

let root: string;
let work: string;

beforeAll(async () => {
  root = await tempDir('reloop-signals-');
  work = path.join(root, 'work');
  await mkdir(path.join(work, 'store', 'sessions'), { recursive: true });
});
afterAll(() => removeDir(root));

/** Resolves once `check` holds, re-checking whenever something changes in `dir`. */
function when(dir: string, check: () => Promise<boolean>): Promise<void> {
  return new Promise((resolve, reject) => {
    let done = false;
    const w = watch(dir, () => void test());
    const test = async () => {
      if (done) return;
      try {
        if (await check()) {
          done = true;
          w.close();
          resolve();
        }
      } catch (e) {
        w.close();
        reject(e);
      }
    };
    void test();
  });
}

async function logsContain(store: string, text: string): Promise<boolean> {
  const dir = path.join(store, 'sessions');
  for (const f of await readdir(dir)) {
    if (f.endsWith('.jsonl') && (await readFile(path.join(dir, f), 'utf8')).includes(text)) return true;
  }
  return false;
}

/** CPU time of a process and all its threads, in clock ticks (/proc/<pid>/stat utime + stime). */
function cpuTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

const CATASTROPHIC = { pattern: '(a+)+$', output_mode: 'content' };

describe('a catastrophic regex (item 5)', () => {
  it('Grep gives up on it with an error and the loop goes on', { timeout: 120_000 }, async () => {
    const cwd = path.join(root, 'redos');
    await mkdir(cwd);
    await writeFile(path.join(cwd, 'evil.txt'), `${'a'.repeat(40)}!\n`);
    const run = await scriptedRun(
      [[{ name: 'Grep', input: CATASTROPHIC }], [{ name: 'Read', input: { file_path: 'evil.txt' } }]],
      { cwd, work, args: ['--permission-mode', 'plan'], timeoutMs: 90_000 },
    );
    expect(run.status).toBe('completed');
    expect(run.result('t0_0')).toMatchObject({ isError: true });
    expect(run.result('t0_0').content).toMatch(/Grep gave up: the pattern .* took more than 5 s/);
    expect(run.result('t1_0').isError).toBe(false);
  });

  it('Ctrl-C during it aborts the run at once', { timeout: 120_000 }, async () => {
    const cwd = path.join(root, 'redos-int');
    await mkdir(cwd);
    // Longer than the Grep's own deadline would allow to pass unnoticed: only SIGINT can end this early.
    await writeFile(path.join(cwd, 'evil.txt'), `${'a'.repeat(60)}!\n`);
    // A store of its own: the log to watch must be this run's.
    const own = path.join(root, 'work-sigint');
    await mkdir(path.join(own, 'store', 'sessions'), { recursive: true });
    const started = await startScriptedRun([[{ name: 'Grep', input: CATASTROPHIC }]], {
      cwd,
      work: own,
      args: ['--permission-mode', 'plan'],
    });
    await when(path.join(own, 'store', 'sessions'), () =>
      logsContain(path.join(own, 'store'), '"type":"tool.started"'),
    );
    // Then until the regex is really running: the process (its worker threads included) burns CPU.
    const pid = started.child.pid as number;
    const base = cpuTicks(pid);
    while (cpuTicks(pid) < base + 10) await new Promise((r) => setTimeout(r, 20));
    started.child.kill('SIGINT');
    const run = await started.run();
    expect(run.status).toBe('aborted');
    expect(
      run.records.some((r) => r.type === 'abort.requested' && r.data.reason === 'interrupted (SIGINT)'),
    ).toBe(true);
  });
});

describe('a glob pattern that backtracks for hours (second pass)', () => {
  it(
    'Ctrl-C during a Glob of `*?*?…Z` over a long file name aborts the run at once',
    { timeout: 120_000 },
    async () => {
      const cwd = path.join(root, 'glob-redos');
      await mkdir(cwd);
      // The glob library's regex for this pattern fails in C(60, 14) ways on this name.
      await writeFile(path.join(cwd, `${'n'.repeat(60)}.txt`), 'x\n');
      const own = path.join(root, 'work-glob-sigint');
      await mkdir(path.join(own, 'store', 'sessions'), { recursive: true });
      const started = await startScriptedRun(
        [[{ name: 'Glob', input: { pattern: `${'*?'.repeat(14)}Z` } }]],
        {
          cwd,
          work: own,
          args: ['--permission-mode', 'plan'],
        },
      );
      await when(path.join(own, 'store', 'sessions'), () =>
        logsContain(path.join(own, 'store'), '"type":"tool.started"'),
      );
      const pid = started.child.pid as number;
      const base = cpuTicks(pid);
      while (cpuTicks(pid) < base + 10) await new Promise((r) => setTimeout(r, 20));
      started.child.kill('SIGINT');
      const run = await started.run();
      expect(run.status).toBe('aborted');
    },
  );
});

describe('SIGTERM and SIGHUP (item 8)', () => {
  it.each([
    'SIGTERM',
    'SIGHUP',
  ] as const)('%s aborts the run, logs it and kills the Bash process group', async (sig) => {
    const cwd = path.join(root, `sig-${sig}`);
    await mkdir(cwd);
    const started = await startScriptedRun(
      [[{ name: 'Bash', input: { command: 'sleep 300 & echo $$ > pgid.txt; wait' } }]],
      { cwd, work, args: ['--permission-mode', 'bypassPermissions'] },
    );
    await when(cwd, async () =>
      (await readFile(path.join(cwd, 'pgid.txt'), 'utf8').catch(() => '')).endsWith('\n'),
    );
    const pgid = Number((await readFile(path.join(cwd, 'pgid.txt'), 'utf8')).trim());
    expect(processGroupAlive(pgid)).toBe(true);
    started.child.kill(sig);
    const run = await started.run();
    expect(run.cli.signal).toBeNull();
    expect(run.status).toBe('aborted');
    expect(
      run.records.some((r) => r.type === 'abort.requested' && r.data.reason === `interrupted (${sig})`),
    ).toBe(true);
    expect(run.result('t0_0').isError).toBe(true);
    expect(processGroupAlive(pgid)).toBe(false);
  });
});
