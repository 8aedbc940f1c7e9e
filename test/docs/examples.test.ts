/**
 * Code shown in the docs is code that compiles and runs: a block marked
 * `<!-- example: <file> -->` must be that file of the repository, verbatim (the file is
 * type-checked with the project, and a test file among them runs with the tests).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
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
