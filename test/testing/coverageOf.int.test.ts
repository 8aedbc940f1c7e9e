/**
 * `coverageOf` and `reloop coverage --json` give the same object for the same logs, tool
 * outcomes included; `--tools` prints those as a table after the usual report.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { apiError, coverageOf, runSession, scriptedModel, text, toolUse } from '../../src/testing/index.ts';
import { onlyJson, runCli } from '../support/cli.ts';
import { echoTool } from '../support/harness.ts';

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('coverageOf(records) is exactly what reloop coverage --json prints for the same logs', async () => {
  const a = await runSession({
    model: scriptedModel([toolUse('echo', { text: 'x' }), text('done')]),
    prompt: 'go',
    tools: [echoTool],
  });
  const b = await runSession({
    model: scriptedModel([apiError(529, 'overloaded_error', 'busy'), text('ok')]),
    prompt: 'go',
  });
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-coverage-of-'));
  const files: string[] = [];
  for (const [i, run] of [a, b].entries()) {
    const file = path.join(dir, `${i}.jsonl`);
    await writeFile(file, run.records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    files.push(file);
  }
  const [r, plain, tools] = await Promise.all([
    runCli(['coverage', '--json', ...files], { cwd: dir }),
    runCli(['coverage', ...files], { cwd: dir }),
    runCli(['coverage', '--tools', ...files], { cwd: dir }),
  ]);
  expect(r.code, r.stderr).toBe(0);
  const report = coverageOf([a.records, b.records]);
  expect(report.tools.echo).toMatchObject({ ok: 1, denied: 0, parked: 0 });
  expect(report).toEqual(onlyJson(r));

  // --tools: the same report, then one row per tool.
  expect(tools.code, tools.stderr).toBe(0);
  expect(tools.stdout.startsWith(plain.stdout)).toBe(true);
  expect(plain.stdout).not.toContain('tool outcomes');
  const table = tools.stdout.slice(plain.stdout.length).split('\n');
  expect(table[1]).toBe('tool outcomes:');
  expect(table[2]).toMatch(
    /^ {2}tool\s+ok\s+error\s+denied\s+hook_blocked\s+invalid_input\s+unknown_tool\s+timeout\s+interrupted\s+parked$/,
  );
  expect(table[3]).toMatch(/^ {2}echo\s+1\s+0\s+0\s+0\s+0\s+0\s+0\s+0\s+0$/);
}, 60_000);
