/**
 * Grep and Glob with `readDenied` (readDeniedPredicate of the policy, from compiled rules): what a
 * Read deny or ask path rule covers is never opened or listed, only counted; without such rules
 * there is no predicate and the tools answer as before.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globTool } from '../../src/tools/builtin/glob.ts';
import { grepTool } from '../../src/tools/builtin/grep.ts';
import { readDeniedPredicate } from '../../src/tools/permissions/policy.ts';
import { compileRuleEntries, type RuleEntry } from '../../src/tools/permissions/ruleSet.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let root: string;
let cwd: string;

async function put(rel: string, content: string) {
  const abs = path.join(cwd, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, content);
}

beforeAll(async () => {
  root = await tempDir('reloop-readdenied-');
  cwd = path.join(root, 'p');
  await put('secrets/key.txt', 'TOKEN-secret\n');
  await put('src/.env', 'TOKEN-env\n');
  await put('src/a.ts', 'TOKEN-a\n');
  // A name outside secrets/ whose real file is inside: matched on what is really opened.
  await symlink(path.join(cwd, 'secrets', 'key.txt'), path.join(cwd, 'src', 'alias.txt'));
});
afterAll(() => removeDir(root));

function predicate(entries: Omit<RuleEntry, 'source'>[]) {
  return readDeniedPredicate(
    compileRuleEntries(
      entries.map((e) => ({ source: 'projectSettings', ...e })),
      { cwd },
    ),
    cwd,
  );
}

describe('readDeniedPredicate', () => {
  it('covers paths under a deny or ask Read rule, as given and at any depth', () => {
    const denied = predicate([
      { behavior: 'deny', rule: 'Read(./secrets/**)' },
      { behavior: 'ask', rule: 'Read(.env)' },
    ]);
    expect(denied?.(path.join(cwd, 'secrets/key.txt'))).toBe(true);
    expect(denied?.(path.join(cwd, 'src/.env'))).toBe(true);
    expect(denied?.(path.join(cwd, 'src/a.ts'))).toBe(false);
  });

  it('is absent without a deny or ask path rule about reading', () => {
    expect(predicate([])).toBeUndefined();
    expect(
      predicate([
        { behavior: 'allow', rule: 'Read(./secrets/**)' },
        { behavior: 'deny', rule: 'Edit(./secrets/**)' },
        { behavior: 'deny', rule: 'Bash(rm:*)' },
      ]),
    ).toBeUndefined();
  });
});

describe('Grep and Glob skip what the rules withhold', () => {
  it('Grep over . opens neither the denied file nor a link to it; the result counts them', async () => {
    const readDenied = predicate([{ behavior: 'deny', rule: 'Read(./secrets/**)' }]);
    const { ctx } = contextFor(cwd);
    const out = textOf(
      await callTool(
        grepTool({ ...(readDenied ? { readDenied } : {}) }),
        { pattern: 'TOKEN', output_mode: 'content' },
        ctx,
      ),
    );
    expect(out).not.toContain('secret');
    expect(out).toContain('src/a.ts:1:TOKEN-a');
    expect(out).toContain('src/.env:1:TOKEN-env');
    // The link is not listed (the walk follows no symlink); the secret is the one path withheld.
    expect(out).toContain('[1 path withheld by permission rules]');
  });

  it('a file reached through a link is matched on its real path: read, then withheld unmatched', async () => {
    const readDenied = predicate([{ behavior: 'deny', rule: 'Read(./secrets/**)' }]);
    const { ctx } = contextFor(cwd);
    const out = textOf(
      await callTool(
        grepTool({ ...(readDenied ? { readDenied } : {}) }),
        { pattern: 'TOKEN', path: 'src/alias.txt' },
        ctx,
      ),
    );
    expect(out).toBe('No matches for "TOKEN".\n[1 path withheld by permission rules]');
  });

  it('an ask rule withholds too (nobody is asked per file); Glob does not list the file', async () => {
    const readDenied = predicate([{ behavior: 'ask', rule: 'Read(.env)' }]);
    const { ctx } = contextFor(cwd);
    const glob = textOf(
      await callTool(globTool({ ...(readDenied ? { readDenied } : {}) }), { pattern: '**/*' }, ctx),
    );
    expect(glob).not.toContain('.env');
    expect(glob).toContain('src/a.ts');
    expect(glob).toContain('[1 path withheld by permission rules]');
    const grep = textOf(
      await callTool(grepTool({ ...(readDenied ? { readDenied } : {}) }), { pattern: 'TOKEN' }, ctx),
    );
    expect(grep).not.toContain('.env');
    expect(grep).toContain('[1 path withheld by permission rules]');
  });

  it('without rules nothing changes: every file is searched and listed, no note', async () => {
    const { ctx } = contextFor(cwd);
    const grep = textOf(await callTool(grepTool(), { pattern: 'TOKEN', output_mode: 'content' }, ctx));
    expect(grep).toContain('secrets/key.txt:1:TOKEN-secret');
    expect(grep).toContain('src/.env:1:TOKEN-env');
    const glob = textOf(await callTool(globTool(), { pattern: '**/*' }, ctx));
    expect(glob).toContain('secrets/key.txt');
    expect(grep + glob).not.toContain('withheld');
  });
});
