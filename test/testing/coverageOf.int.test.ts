/** `coverageOf` and `reloop coverage --json` give the same object for the same logs. */
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
  const r = await runCli(['coverage', '--json', ...files], { cwd: dir });
  expect(r.code, r.stderr).toBe(0);
  expect(coverageOf([a.records, b.records])).toEqual(onlyJson(r));
}, 60_000);
