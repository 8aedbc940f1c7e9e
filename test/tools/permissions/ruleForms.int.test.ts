/**
 * Every rule form Claude Code documents, each with a call it matches and one it does not, through
 * the real policy on a real directory tree (rules with their sources, as the settings give them).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../../src/tools/builtin/index.ts';
import { createPermissionPolicy } from '../../../src/tools/permissions/index.ts';
import type { PermissionMode } from '../../../src/tools/permissions/modes.ts';
import { compileRuleEntries, type RuleEntry } from '../../../src/tools/permissions/ruleSet.ts';
import type { AnyTool, PermissionResult } from '../../../src/tools/types.ts';
import { removeDir, tempDir } from '../toolHarness.ts';

let root: string;
let cwd: string;
let home: string;
let project: string;
const builtins = new Map<string, AnyTool>(builtinTools().map((t) => [t.name, t]));
const fake = (name: string, isReadOnly = false) => ({ name, isReadOnly }) as unknown as AnyTool;
const toolOf = (name: string) => builtins.get(name) ?? fake(name, name === 'Task');

beforeAll(async () => {
  root = await tempDir('reloop-rule-forms-');
  cwd = path.join(root, 'work');
  home = path.join(root, 'home');
  project = path.join(root, 'proj');
  for (const d of ['src/deep', 'secrets', 'build', 'docs'])
    await mkdir(path.join(cwd, d), { recursive: true });
  await mkdir(path.join(home, 'notes'), { recursive: true });
  await mkdir(path.join(project, 'src'), { recursive: true });
  await writeFile(path.join(cwd, 'notes.txt'), 'n');
});
afterAll(() => removeDir(root));

type Behavior = 'allow' | 'ask' | 'deny';
/** The policy's answer for one call under one rule (of `projectSettings` rooted at `ruleRoot`). */
async function decide(
  behavior: Behavior,
  rule: string,
  tool: string,
  input: unknown,
  { mode = 'default' as PermissionMode, ruleRoot = cwd } = {},
): Promise<PermissionResult> {
  const entry: RuleEntry = {
    source: 'projectSettings',
    behavior,
    rule,
    root: ruleRoot,
    file: 'settings.json',
  };
  const rules = compileRuleEntries([entry], { cwd, home });
  expect(rules.warnings).toEqual([]);
  const policy = createPermissionPolicy({ mode, rules, cwd });
  return policy({ tool: toolOf(tool), input, toolUseId: 'toolu_1', cwd });
}
/** Whether an allow rule allows the call (with nothing else, acceptEdits aside, it is asked). */
const allows = async (rule: string, tool: string, input: unknown, opts = {}) =>
  (await decide('allow', rule, tool, input, opts)).by === `projectSettings allow ${rule}`;
const denies = async (rule: string, tool: string, input: unknown, opts = {}) =>
  (await decide('deny', rule, tool, input, opts)).by === `projectSettings deny ${rule}`;

const bash = (command: string) => ({ command });
const read = (file_path: string) => ({ file_path });
const write = (file_path: string) => ({ file_path, content: 'x' });

describe('tool rules', () => {
  it('Tool: every call of that tool, not another', async () => {
    expect(await allows('Bash', 'Bash', bash('make'))).toBe(true);
    expect(await allows('Bash', 'Write', write('a.txt'))).toBe(false);
    expect(await allows('Bash(*)', 'Bash', bash('anything at all'))).toBe(true);
  });
});

describe('Bash rules', () => {
  it('exact: that command only', async () => {
    expect(await allows('Bash(npm run build)', 'Bash', bash('npm run build'))).toBe(true);
    expect(await allows('Bash(npm run build)', 'Bash', bash('npm run build:dev'))).toBe(false);
  });
  it('cmd:* (legacy prefix): the command and more words, on a word boundary', async () => {
    expect(await allows('Bash(npm test:*)', 'Bash', bash('npm test -- --watch'))).toBe(true);
    expect(await allows('Bash(npm test:*)', 'Bash', bash('npm test'))).toBe(true);
    expect(await allows('Bash(npm test:*)', 'Bash', bash('npm testing'))).toBe(false);
  });
  it('cmd * (word-boundary wildcard): as the prefix form', async () => {
    expect(await allows('Bash(ls *)', 'Bash', bash('ls -la'))).toBe(true);
    expect(await allows('Bash(ls *)', 'Bash', bash('lsof'))).toBe(false);
    expect(await allows('Bash(git *)', 'Bash', bash('git diff'))).toBe(true);
    expect(await allows('Bash(git *)', 'Bash', bash('gitk'))).toBe(false);
  });
  it('* anywhere: middle, start, or no boundary', async () => {
    expect(await allows('Bash(git * main)', 'Bash', bash('git checkout main'))).toBe(true);
    expect(await allows('Bash(git * main)', 'Bash', bash('git checkout dev'))).toBe(false);
    expect(await allows('Bash(* --version)', 'Bash', bash('node --version'))).toBe(true);
    expect(await allows('Bash(* --version)', 'Bash', bash('node --help'))).toBe(false);
    expect(await allows('Bash(ls*)', 'Bash', bash('lsof -i'))).toBe(true);
    expect(await allows('Bash(ls*)', 'Bash', bash('cat x'))).toBe(false);
  });
  it('a wildcard allow vouches for every command of a compound one only when each matches', async () => {
    expect(await allows('Bash(git *)', 'Bash', bash('git add . && git commit -m x'))).toBe(true);
    expect(await allows('Bash(git *)', 'Bash', bash('git add . && rm -rf /'))).toBe(false);
  });
  it('a wildcard deny catches any part of a compound command and any spelling of the program', async () => {
    expect(await denies('Bash(rm *)', 'Bash', bash('ls; /bin/rm -rf build'))).toBe(true);
    expect(await denies('Bash(git push * main)', 'Bash', bash('git push origin main'))).toBe(true);
    expect(await denies('Bash(git push * main)', 'Bash', bash('git push origin dev'))).toBe(false);
  });
});

describe('path rules (gitignore-style)', () => {
  it('x and ./x: relative to the working directory', async () => {
    expect(await denies('Read(./secrets/**)', 'Read', read('secrets/key'))).toBe(true);
    expect(await denies('Read(./secrets/**)', 'Read', read('src/key'))).toBe(false);
    expect(await denies('Read(secrets/**)', 'Read', read('secrets/key'))).toBe(true);
    expect(await denies('Read(secrets/**)', 'Read', read('src/secrets/key'))).toBe(false);
  });
  it('a pattern without a slash matches at any depth; a directory covers what is in it', async () => {
    expect(await denies('Read(.env)', 'Read', read('src/deep/.env'))).toBe(true);
    expect(await denies('Read(.env)', 'Read', read('src/deep/.envrc'))).toBe(false);
    expect(await denies('Read(*.key)', 'Read', read('src/deep/a.key'))).toBe(true);
    expect(await denies('Read(secrets)', 'Read', read('secrets/a/b'))).toBe(true);
    expect(await denies('Read(build/)', 'Read', read('build/out.js'))).toBe(true);
    expect(await denies('Read(build/)', 'Read', read('builder.js'))).toBe(false);
  });
  it('** globs across directories, * within one', async () => {
    expect(await allows('Edit(src/**/*.ts)', 'Edit', write('src/deep/a.ts'), { mode: 'default' })).toBe(true);
    expect(await allows('Edit(src/*.ts)', 'Edit', write('src/deep/a.ts'))).toBe(false);
    expect(await allows('Edit(src/*.ts)', 'Edit', write('src/a.ts'))).toBe(true);
  });
  it('/x: anchored at the project root of the settings file', async () => {
    // The rule's file belongs to `project`: /src/** is project/src/**, not cwd/src/**.
    const opts = { ruleRoot: project };
    expect(await denies('Read(/src/**)', 'Read', read(path.join(project, 'src', 'a.ts')), opts)).toBe(true);
    expect(await denies('Read(/src/**)', 'Read', read('src/a.ts'), opts)).toBe(false);
    expect(await allows('Edit(/src/**)', 'Edit', write('src/a.ts'))).toBe(true);
    expect(await allows('Edit(/src/**)', 'Edit', write('docs/a.md'))).toBe(false);
  });
  it('//x: an absolute path; ~/x: the home directory', async () => {
    const abs = `Read(/${path.join(root, 'home', 'notes')}/**)`;
    expect(await allows(abs, 'Read', read(path.join(home, 'notes', 'a.md')))).toBe(true);
    expect(await allows(abs, 'Read', read(path.join(project, 'src', 'a.ts')))).toBe(false);
    expect(await allows('Read(~/notes/**)', 'Read', read(path.join(home, 'notes', 'a.md')))).toBe(true);
    expect(await allows('Read(~/notes/**)', 'Read', read(path.join(project, 'src', 'a.ts')))).toBe(false);
  });
  it('Edit(...) covers every writing tool; Read(...) the reading ones', async () => {
    expect(await allows('Edit(docs/**)', 'Write', write('docs/a.md'))).toBe(true);
    expect(await allows('Edit(docs/**)', 'Edit', write('docs/a.md'))).toBe(true);
    expect(await allows('Edit(docs/**)', 'Read', read('docs/a.md'), { mode: 'dontAsk' })).toBe(false);
    expect(await denies('Read(secrets/**)', 'Grep', { pattern: 'x', path: 'secrets' })).toBe(true);
    expect(await denies('Read(secrets/**)', 'Write', write('secrets/a'))).toBe(false);
  });
});

describe('MCP, Task and WebFetch rules', () => {
  it('mcp__server and mcp__server__*: every tool of the server, not another server', async () => {
    for (const rule of ['mcp__github', 'mcp__github__*']) {
      expect(await allows(rule, 'mcp__github__list_issues', {})).toBe(true);
      expect(await allows(rule, 'mcp__gitlab__list_issues', {})).toBe(false);
      expect(await allows(rule, 'mcp__githubx__list', {})).toBe(false);
    }
  });
  it('mcp__server__tool: that tool only', async () => {
    expect(await denies('mcp__github__delete_repo', 'mcp__github__delete_repo', {})).toBe(true);
    expect(await denies('mcp__github__delete_repo', 'mcp__github__list_issues', {})).toBe(false);
  });
  it('Task(agent-name): starting that sub-agent', async () => {
    const task = (subagent_type: string) => ({ description: 'd', prompt: 'p', subagent_type });
    expect(await denies('Task(reviewer)', 'Task', task('reviewer'))).toBe(true);
    expect(await denies('Task(reviewer)', 'Task', task('writer'))).toBe(false);
  });
  it('WebFetch(domain:x): that host; *.x its subdomains', async () => {
    const url = (u: string) => ({ url: u, prompt: 'p' });
    expect(await allows('WebFetch(domain:example.com)', 'WebFetch', url('https://example.com/a'))).toBe(true);
    expect(await allows('WebFetch(domain:example.com)', 'WebFetch', url('https://evil.com/a'))).toBe(false);
    expect(await allows('WebFetch(domain:*.example.com)', 'WebFetch', url('https://docs.example.com/'))).toBe(
      true,
    );
  });
});

describe('deny beats allow in every mode; ask beats allow', () => {
  const modes: PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'];
  it.each(modes)('%s: deny Read(secrets/**) + allow Read stops the read', async (mode) => {
    const rules = compileRuleEntries(
      [
        { source: 'localSettings', behavior: 'allow', rule: 'Read' },
        { source: 'userSettings', behavior: 'deny', rule: 'Read(secrets/**)' },
      ],
      { cwd, home },
    );
    const policy = createPermissionPolicy({ mode, rules, cwd });
    const r = await policy({ tool: toolOf('Read'), input: read('secrets/key'), toolUseId: 't', cwd });
    expect(r).toMatchObject({ behavior: 'deny', by: 'userSettings deny Read(secrets/**)' });
    const other = await policy({ tool: toolOf('Read'), input: read('notes.txt'), toolUseId: 't', cwd });
    expect(other).toMatchObject({ behavior: 'allow', by: 'localSettings allow Read' });
  });

  it.each(
    modes.filter((m) => m !== 'plan'),
  )('%s: an ask rule asks (dontAsk: denies) what an allow rule allows', async (mode) => {
    const rules = compileRuleEntries(
      [
        { source: 'projectSettings', behavior: 'allow', rule: 'Bash' },
        { source: 'projectSettings', behavior: 'ask', rule: 'Bash(git push:*)' },
      ],
      { cwd, home },
    );
    const policy = createPermissionPolicy({ mode, rules, cwd });
    const r = await policy({ tool: toolOf('Bash'), input: bash('git push'), toolUseId: 't', cwd });
    expect(r).toMatchObject({
      behavior: mode === 'dontAsk' ? 'deny' : 'ask',
      by: 'projectSettings ask Bash(git push:*)',
    });
  });
});

describe('rules that cannot be read', () => {
  it('an allow is dropped, a deny asks the whole tool; each is a warning naming the file and rule', async () => {
    const rules = compileRuleEntries(
      [
        {
          source: 'projectSettings',
          behavior: 'allow',
          rule: 'Bash(echo $(id))',
          file: '/p/.claude/settings.json',
        },
        {
          source: 'projectSettings',
          behavior: 'deny',
          rule: 'Read(a/../b)',
          file: '/p/.claude/settings.json',
        },
        { source: 'projectSettings', behavior: 'deny', rule: '((', file: '/p/.claude/settings.json' },
      ],
      { cwd, home },
    );
    expect(rules.warnings).toHaveLength(3);
    expect(rules.warnings[0]).toMatch(
      /^\/p\/\.claude\/settings\.json: allow rule "Bash\(echo \$\(id\)\)" cannot be read/,
    );
    expect(rules.warnings[1]).toContain('every Read call is asked instead');
    expect(rules.allow).toEqual([]);
    const policy = createPermissionPolicy({ mode: 'bypassPermissions', rules, cwd });
    const r = await policy({ tool: toolOf('Read'), input: read('notes.txt'), toolUseId: 't', cwd });
    expect(r).toMatchObject({ behavior: 'ask', by: 'projectSettings deny Read(a/../b)' });
  });
});
