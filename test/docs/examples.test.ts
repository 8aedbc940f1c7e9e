/**
 * Code shown in the docs is code that compiles and runs: a block marked
 * `<!-- example: <file> -->` must be that file of the repository, verbatim (the file is
 * type-checked with the project, and a test file among them runs with the tests). The library
 * guide's examples (examples/library/) are run here as a user runs them, each in its own node
 * process, and their output checked; the CommonJS one loads the built package (dist/).
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

const docs = [
  'README.md',
  ...readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const blocks = docs.flatMap((doc) =>
  [
    ...readFileSync(path.join(REPO_ROOT, doc), 'utf8').matchAll(
      /<!-- example: (\S+) -->\n```\w*\n([\s\S]*?)```/g,
    ),
  ].map(([, file, code]) => ({ doc, file: file!, code: code! })),
);

it('the docs show their examples', () => {
  expect(blocks.map((b) => b.file)).toEqual(
    expect.arrayContaining([
      'examples/readmeLibrary.ts',
      'examples/readmeTesting.ts',
      'test/testing/workedExample.test.ts',
    ]),
  );
});

it.each(blocks.map((b) => [`${b.doc} shows ${b.file}`, b] as const))('%s verbatim', (_name, b) => {
  expect(b.code).toBe(readFileSync(path.join(REPO_ROOT, b.file), 'utf8'));
});

/** What each library example must print (a line of its output). */
const LIBRARY_EXAMPLES: Record<string, RegExp> = {
  'customAgent.ts': /^completed completed 3 turns$/m,
  'hooks.ts': /Denied by PreToolUse hook: T-9 is archived[\s\S]*^completed$/m,
  'streaming.ts': /lookupTicket: ok[\s\S]*^success: T-1 is open\. \(2 turns\)$/m,
  'multiTurnStore.ts': /^completed 6 messages\nreplays identically$/m,
  'commonjs.cjs': /^completed completed$/m,
};

describe('examples/library', () => {
  const dir = path.join(REPO_ROOT, 'examples/library');
  it('every example of the library guide is shown in docs/library.md and run here', () => {
    const files = readdirSync(dir).filter((f) => f !== 'lookupTicket.ts');
    expect(files.sort()).toEqual(Object.keys(LIBRARY_EXAMPLES).sort());
    const shown = blocks.filter((b) => b.doc === 'docs/library.md').map((b) => b.file);
    for (const f of readdirSync(dir)) expect(shown).toContain(`examples/library/${f}`);
  });

  it('require() of the ESM-only package fails as docs/library.md says', async () => {
    const run = promisify(execFile)(process.execPath, ['-e', "require('reloop')"], { cwd: REPO_ROOT });
    await expect(run).rejects.toMatchObject({
      stderr: expect.stringContaining('ERR_PACKAGE_PATH_NOT_EXPORTED'),
    });
  });

  it.each(Object.entries(LIBRARY_EXAMPLES))(
    '%s runs',
    async (file, expected) => {
      const args = file.endsWith('.cjs') ? [path.join(dir, file)] : ['--import', 'tsx', path.join(dir, file)];
      const { stdout } = await promisify(execFile)(process.execPath, args, {
        cwd: REPO_ROOT,
        timeout: 60_000,
      });
      expect(stdout).toMatch(expected);
    },
    90_000,
  );
});
