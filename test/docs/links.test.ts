/** The docs stand on their own: every relative link resolves to a file of the repository. */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

const docs = [
  'README.md',
  ...readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

it.each(docs)('%s links only to files inside the repository', (doc) => {
  const text = readFileSync(path.join(REPO_ROOT, doc), 'utf8');
  const broken: string[] = [];
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(https?:|mailto:|#)/.test(target!)) continue;
    const file = path.resolve(REPO_ROOT, path.dirname(doc), target!.split('#')[0]!);
    const inside = file.startsWith(REPO_ROOT);
    if (!inside || !existsSync(file)) broken.push(target!);
  }
  expect(broken).toEqual([]);
  // Design notes kept outside the repository are no reference for its readers.
  expect(text).not.toMatch(/DESIGN(\.md)?\b|\.\.\/shared/);
});
