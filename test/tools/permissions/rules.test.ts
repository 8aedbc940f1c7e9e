import { describe, expect, it } from 'vitest';
import type { ResolvedPath } from '../../../src/tools/paths.ts';
import { analyseBash } from '../../../src/tools/permissions/bashCommand.ts';
import { PermissionModeSchema } from '../../../src/tools/permissions/modes.ts';
import {
  allowMatch,
  denyMatches,
  PermissionRuleError,
  parseRule,
  parseRules,
} from '../../../src/tools/permissions/rules.ts';

const cwd = '/repo';
function p(relative: string, opts: Partial<ResolvedPath> = {}): ResolvedPath {
  return { absolute: `/repo/${relative}`, real: `/repo/${relative}`, relative, inside: true, ...opts };
}

describe('parseRule', () => {
  it('parses whole-tool, exact, prefix and path rules', () => {
    expect(parseRule('Glob')).toMatchObject({ tool: 'Glob', kind: 'tool' });
    expect(parseRule('Bash(*)')).toMatchObject({ tool: 'Bash', kind: 'tool' });
    expect(parseRule('Bash(git  status)')).toMatchObject({ kind: 'exact', command: 'git status' });
    expect(parseRule('Bash(npm test:*)')).toMatchObject({ kind: 'prefix', command: 'npm test' });
    expect(parseRule('Edit(src/**)')).toMatchObject({ tool: 'Edit', kind: 'path', absolute: false });
    expect(parseRule('Read(//etc/hosts)')).toMatchObject({ kind: 'path', absolute: true });
    expect(parseRule('mcp__github__list_issues')).toMatchObject({ kind: 'tool' });
  });

  it.each([
    '',
    'Bash(',
    'Bash()',
    'Bash(:*)',
    '(src/**)',
    'Ba sh',
    '9Tool',
  ])('rejects %j with a coded error', (raw) => {
    try {
      parseRule(raw);
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(PermissionRuleError);
      expect((e as PermissionRuleError).code).toBe('INVALID_PERMISSION_RULE');
      expect((e as Error).message).toContain(JSON.stringify(raw));
    }
  });
});

describe('analyseBash', () => {
  const names = (c: string) => analyseBash(c).allowViews.map((v) => v.words.join(' '));
  it('finds every simple command of a compound one, outside quotes', () => {
    expect(names('npm test && git status; ls | wc -l || echo "a;b" & x')).toEqual([
      'npm test',
      'git status',
      'ls',
      'wc -l',
      'echo a;b',
      'x',
    ]);
  });

  it('cannot account for substitutions, process substitution and file redirects', () => {
    for (const c of [
      'echo $(rm -rf x)',
      'echo `id`',
      'echo "$(id)"',
      'diff <(ls) x',
      'echo hi > f',
      'echo "open',
    ]) {
      expect(analyseBash(c).unaccounted, c).toBeDefined();
    }
    for (const c of ["echo '$(not run)'", 'npm test 2>&1', 'npm test >/dev/null 2>&1', 'make &> /dev/null']) {
      expect(analyseBash(c).unaccounted, c).toBeUndefined();
    }
    expect(names('npm test 2>&1 | tail')).toEqual(['npm test', 'tail']);
  });
});

describe('rule matching', () => {
  const allow = parseRules(['Bash(npm test:*)', 'Bash(git status)', 'Edit(src/**)', 'Read(//etc/hosts)']);

  it('matches Bash prefix rules on word boundaries and exact rules exactly', () => {
    const bash = (command: string) => allowMatch(allow, { tool: 'Bash', command })?.map((r) => r.raw);
    expect(bash('npm test')).toEqual(['Bash(npm test:*)']);
    expect(bash('npm test -- --watch=false')).toEqual(['Bash(npm test:*)']);
    expect(bash('npm testing')).toBeUndefined();
    expect(bash('git status')).toEqual(['Bash(git status)']);
    expect(bash('git status --short')).toBeUndefined();
  });

  it('allows a compound command only when every part is allowed and nothing is opaque', () => {
    const bash = (command: string) => allowMatch(allow, { tool: 'Bash', command })?.map((r) => r.raw);
    expect(bash('npm test && git status')).toEqual(['Bash(npm test:*)', 'Bash(git status)']);
    expect(bash('npm test && rm -rf ~')).toBeUndefined();
    expect(bash('npm test $(rm -rf ~)')).toBeUndefined();
    expect(bash('npm test > out.txt')).toBeUndefined();
  });

  it('denies when any part of a compound command matches', () => {
    const [rm] = parseRules(['Bash(rm:*)']);
    expect(denyMatches(rm!, { tool: 'Bash', command: 'ls; rm -rf x' }, cwd)).toBe(true);
    expect(denyMatches(rm!, { tool: 'Bash', command: 'ls -la' }, cwd)).toBe(false);
  });

  it('matches path rules on the real relative path; absolute rules on the real path', () => {
    expect(allowMatch(allow, { tool: 'Edit', path: p('src/a/b.ts') })).toBeDefined();
    expect(allowMatch(allow, { tool: 'Edit', path: p('test/a.ts') })).toBeUndefined();
    // Edit rules cover every tool that writes files, as in Claude Code.
    expect(allowMatch(allow, { tool: 'Write', path: p('src/a.ts') })).toBeDefined();
    const link = p('src/link/passwd', { real: '/etc/passwd', relative: '../etc/passwd', inside: false });
    expect(allowMatch(allow, { tool: 'Edit', path: link })).toBeUndefined();
    const hosts = p('x', { real: '/etc/hosts', relative: '../etc/hosts', inside: false });
    expect(allowMatch(allow, { tool: 'Read', path: hosts })).toBeDefined();
  });

  it('matches deny path rules on the written path too', () => {
    const [secrets] = parseRules(['Read(secrets/**)']);
    const viaAlias = p('alias/key', { real: '/repo/secrets/key', relative: 'secrets/key' });
    expect(denyMatches(secrets!, { tool: 'Read', path: viaAlias }, cwd)).toBe(true);
    const [alias] = parseRules(['Read(alias/**)']);
    expect(denyMatches(alias!, { tool: 'Read', path: viaAlias }, cwd)).toBe(true);
    expect(denyMatches(alias!, { tool: 'Read', path: p('other/key') }, cwd)).toBe(false);
  });
});

describe('PermissionModeSchema', () => {
  it('accepts the four modes only', () => {
    for (const m of ['default', 'acceptEdits', 'bypassPermissions', 'plan'])
      expect(PermissionModeSchema.parse(m)).toBe(m);
    expect(PermissionModeSchema.safeParse('yolo').success).toBe(false);
  });
});
