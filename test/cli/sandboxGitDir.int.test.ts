import { execFileSync } from 'node:child_process';
import { chmod, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedRun, type ToolCall } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

/**
 * Issue 18 item 4: a repository planted in the tree. Four files make a folder a bare git
 * repository (HEAD, objects/, refs/ — its config is the payload), and git run there for an
 * allowed `git status` or `git fetch` used it. Now the write that would complete one is a
 * protected path, and git run by Bash and by hooks refuses a bare repository it was not pointed
 * at (safe.bareRepository=explicit); a tree folder set as core.hooksPath is protected like
 * .git/hooks. Every payload here ran before the fix.
 */

let root: string;
let work: string;

beforeAll(async () => {
  root = await tempDir('reloop-gitdir-');
  work = path.join(root, 'work');
});
afterAll(() => removeDir(root));

const bash = (command: string): ToolCall => ({ name: 'Bash', input: { command } });
const write = (file_path: string, content: string): ToolCall => ({
  name: 'Write',
  input: { file_path, content },
});

/** A repository with a subfolder `sub`, the working directory of the run. */
async function repoWithSub(name: string): Promise<{ repo: string; sub: string }> {
  const repo = path.join(root, name);
  await mkdir(path.join(repo, 'sub'), { recursive: true });
  execFileSync('git', ['init', '-q'], { cwd: repo });
  return { repo, sub: path.join(repo, 'sub') };
}

/**
 * The planted config: fsmonitor runs on `git status` where there is a work tree, sshCommand on
 * `git fetch`. Run through the shell, it names its marker after who ran git (hooks get
 * RELOOP_PROJECT_DIR, Bash commands do not).
 */
const PAYLOAD =
  '[core]\n\tfsmonitor = "touch PWN_FSMONITOR; false"\n' +
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell expansion, for git's shell
  '\tsshCommand = "touch PWN_${RELOOP_PROJECT_DIR:+HOOK}SSH; false"\n' +
  '[remote "origin"]\n\turl = ssh://h/x\n';

async function pwned(...dirs: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of dirs) for (const f of await readdir(d)) if (f.startsWith('PWN')) out.push(f);
  return out;
}

describe('a folder made a git repository by the file tools (item 4)', () => {
  it('acceptEdits + Bash(git status) + Bash(git fetch): the write that completes it is asked, in the same batch too; git runs nothing planted', async () => {
    const { repo, sub } = await repoWithSub('planted');
    const run = await scriptedRun(
      [
        [
          write('HEAD', 'ref: refs/heads/main\n'),
          write('config', PAYLOAD),
          write('objects/info/keep', ''),
          write('refs/heads/keep', ''),
        ],
        [bash('git status'), bash('git fetch')],
      ],
      {
        cwd: sub,
        work,
        args: [
          '--permission-mode',
          'acceptEdits',
          '--allow',
          'Bash(git status)',
          '--allow',
          'Bash(git fetch)',
        ],
      },
    );
    expect(run.status, run.cli.stderr).toBe('completed');
    expect(await pwned(sub, repo)).toEqual([]);
    // HEAD, an ordinary `config` and objects/ alone make no repository: written.
    for (const id of ['t0_0', 't0_1', 't0_2']) expect(run.result(id), id).toMatchObject({ isError: false });
    expect(await readFile(path.join(sub, 'config'), 'utf8')).toBe(PAYLOAD);
    // refs/ would complete it.
    expect(run.result('t0_3')).toMatchObject({ isError: true, outcome: 'denied' });
    expect(run.decision('t0_3')).toMatch(/would make the working directory a git repository/);
    // git found the repository above, as it should.
    expect(run.result('t1_0').content).toMatch(/On branch|No commits yet/);
  });

  it('once a folder is one, every write under it is asked, in bypassPermissions too', async () => {
    const { repo, sub } = await repoWithSub('existing');
    const bare = path.join(sub, 'vendored.git');
    execFileSync('git', ['init', '-q', '--bare', bare]);
    const run = await scriptedRun(
      [[write('vendored.git/config', PAYLOAD), write('vendored.git/hooks/post-update', 'touch PWN\n')]],
      { cwd: sub, work, args: ['--permission-mode', 'bypassPermissions'] },
    );
    for (const id of ['t0_0', 't0_1']) {
      expect(run.result(id), id).toMatchObject({ isError: true, outcome: 'denied' });
      expect(run.decision(id), id).toMatch(
        /would make vendored\.git a git repository \(HEAD, objects\/, refs\/\), or change one/,
      );
    }
    expect(await readFile(path.join(bare, 'config'), 'utf8')).not.toContain('PWN');
    expect(await pwned(sub, repo)).toEqual([]);
  });
});

describe('a repository planted some other way (an allowed cp -r, an extracted archive)', () => {
  it('git run by an allowed Bash command and by a hook refuses it', async () => {
    const { repo, sub } = await repoWithSub('extracted');
    await mkdir(path.join(sub, 'objects', 'info'), { recursive: true });
    await mkdir(path.join(sub, 'refs', 'heads'), { recursive: true });
    await writeFile(path.join(sub, 'HEAD'), 'ref: refs/heads/main\n');
    await writeFile(path.join(sub, 'config'), PAYLOAD);
    const run = await scriptedRun([[bash('git fetch')]], {
      cwd: sub,
      work,
      args: ['--allow', 'Bash(git fetch)', '--stop-hook', 'git fetch; exit 0'],
    });
    expect(run.status, run.cli.stderr).toBe('completed');
    expect(await pwned(sub, repo)).toEqual([]);
    expect(run.result('t0_0').content).toMatch(/safe\.bareRepository/);
    // The hook ran (its git refused the folder too: no PWN_HOOKSSH).
    const hook = run.records.find((r) => r.type === 'hook.decided');
    expect(JSON.stringify(hook?.data ?? null)).toContain('git fetch; exit 0');
  });
});

describe('core.hooksPath pointing into the tree', () => {
  it('acceptEdits + Bash(git commit:*): editing the project hook it names is asked; git commit runs the old hook', async () => {
    const repo = path.join(root, 'hookspath');
    await mkdir(path.join(repo, '.githooks'), { recursive: true });
    execFileSync('git', ['init', '-q'], { cwd: repo });
    for (const [k, v] of [
      ['core.hooksPath', '.githooks'],
      ['user.name', 'T'],
      ['user.email', 't@example.com'],
    ] as const)
      execFileSync('git', ['config', k, v], { cwd: repo });
    const hook = path.join(repo, '.githooks', 'pre-commit');
    await writeFile(hook, '#!/bin/sh\nexit 0\n');
    await chmod(hook, 0o755);
    const run = await scriptedRun(
      [
        [{ name: 'Read', input: { file_path: '.githooks/pre-commit' } }],
        [
          {
            name: 'Edit',
            input: {
              file_path: '.githooks/pre-commit',
              old_string: 'exit 0',
              new_string: 'touch PWN_HOOK; exit 0',
            },
          },
        ],
        [bash('git commit -q --allow-empty -m x')],
      ],
      { cwd: repo, work, args: ['--permission-mode', 'acceptEdits', '--allow', 'Bash(git commit:*)'] },
    );
    expect(run.result('t1_0')).toMatchObject({ isError: true, outcome: 'denied' });
    expect(run.decision('t1_0')).toMatch(/under \.githooks, a protected path/);
    expect(await readFile(hook, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(run.result('t2_0').isError).toBe(false);
    expect(await pwned(repo)).toEqual([]);
  });
});
