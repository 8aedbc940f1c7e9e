import { execFile } from 'node:child_process';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { demoScript } from '../demo/demoScript.ts';
import { costOf } from '../model/pricing.ts';
import { ScriptedModelClient } from '../model/scripted.ts';
import type { RunResult } from '../runtime/session.ts';
import type { RunOptions } from './commands/run.ts';
import { openStore, out, printJson } from './io.ts';
import { checkRunFlags, prepareRun, runPrepared } from './runSession.ts';

/**
 * The project the demo fixes. Not compiled, so not under dist/: found from the package root,
 * which is two levels up from both src/cli/ and dist/cli/ (the package ships src/demo/project).
 */
const PROJECT = fileURLToPath(new URL('../../src/demo/project/', import.meta.url));

/**
 * `reloop run --demo`: copies the bundled project (a failing test) to a scratch directory
 * and runs the scripted demo session on it with the real tools, a real stop hook (the test
 * itself) and a real file store. The fix it makes is real: the test passes afterwards.
 */
export async function runDemo(opts: RunOptions): Promise<RunResult> {
  // Checked before the demo copies its project, so bad usage leaves nothing behind.
  checkRunFlags(opts);
  const scratch = await mkdtemp(path.join(tmpdir(), 'reloop-demo-'));
  await cp(PROJECT, scratch, { recursive: true });
  if (!opts.json) out(`demo project copied to ${scratch} (its test fails: sum() subtracts)`);
  const demo: RunOptions = {
    ...opts,
    cwd: scratch,
    permissionMode: 'acceptEdits',
    // The demo's scratch project is the same everywhere: no settings file changes it unless asked.
    settingSources: opts.settingSources ?? '',
    allow: [...opts.allow, 'Bash(node test.js)'],
    // The stop hook is the test: exit 2 (block) while it fails, with its output as the reason.
    stopHook: [
      ...opts.stopHook,
      'out=$(node test.js 2>&1) || { printf "node test.js fails:\\n%s\\n" "$out" >&2; exit 2; }',
    ],
  };
  const prepared = await prepareRun(demo, {
    model: new ScriptedModelClient(demoScript(), { costOf, file: 'demo script' }),
    // A small threshold and tail, so this small project's context gets compacted.
    settings: { model: 'claude-sonnet-4-6', autoCompactThreshold: 2_800 },
    compactTailTokens: 300,
    title: 'demo: fix the failing test',
  });
  const store = await openStore(opts, { create: true });
  try {
    // Under --json the demo prints one object: the run's result plus the project check.
    const result = await runPrepared(
      store,
      'The test in this project fails. Find the bug and fix it.',
      prepared,
      demo,
      { printResult: false },
    );
    const check = await promisify(execFile)('node', ['test.js'], { cwd: scratch }).then(
      (r) => ({ ok: true, output: r.stdout.trim() }),
      (e: { stderr?: string }) => ({
        ok: false,
        output:
          String(e.stderr ?? e)
            .trim()
            .split('\n')[0] ?? '',
      }),
    );
    if (opts.json) {
      const { sessionId, runId, status, reason, turns, usage } = result;
      printJson({ sessionId, runId, status, reason, turns, usage, project: scratch, testPasses: check.ok });
    } else
      out(
        `  project: ${scratch} — \`node test.js\`: ${check.ok ? check.output : `still failing (${check.output})`}`,
      );
    return result;
  } finally {
    await store.close();
  }
}
