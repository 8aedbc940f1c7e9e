import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scriptedRun, type ToolCall } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

/**
 * The sandbox against a model that tries to escape (issue 9, items 1, 2, 6, 7): the real CLI, a
 * scripted model, a real directory tree. `root/proj` is the working directory; `root/.ssh` and
 * `root/outside` hold what must never come back.
 */

let root: string;
let proj: string;
let work: string;
const KEY = 'KEY-MATERIAL-d41d8cd9';

beforeAll(async () => {
  root = await tempDir('reloop-sandbox-');
  proj = path.join(root, 'proj');
  work = path.join(root, 'work');
  await mkdir(path.join(root, '.ssh'), { recursive: true });
  await writeFile(path.join(root, '.ssh', 'id_rsa'), `${KEY}\n`);
  await mkdir(path.join(root, 'outside'));
  await writeFile(path.join(root, 'outside', 'secret.txt'), `${KEY}\n`);
  await mkdir(proj);
  await writeFile(path.join(proj, 'a.txt'), 'hello KEY\n');
  await symlink(path.join(root, 'outside'), path.join(proj, 'link_out'));
  await symlink(path.join(root, '.ssh'), path.join(proj, 'ssh_link'));
});
afterAll(() => removeDir(root));

const ESCAPES: ToolCall[] = [
  { name: 'Grep', input: { pattern: '.', glob: '..{,}/.ssh/*', output_mode: 'content' } },
  { name: 'Grep', input: { pattern: '.', glob: '.{,.}/.ssh/*', output_mode: 'content' } },
  { name: 'Grep', input: { pattern: 'KEY', glob: 'link_out/*', output_mode: 'content' } },
  { name: 'Grep', input: { pattern: 'KEY', glob: '{link_out,ssh_link}/**', output_mode: 'content' } },
  { name: 'Grep', input: { pattern: 'KEY', path: 'link_out', output_mode: 'content' } },
  { name: 'Grep', input: { pattern: 'KEY', glob: '/**/id_rsa', output_mode: 'content' } },
  { name: 'Grep', input: { pattern: 'KEY', glob: '\\.\\./.ssh/*', output_mode: 'content' } },
  { name: 'Glob', input: { pattern: '..{,}/.ssh/*' } },
  { name: 'Glob', input: { pattern: 'link_out/*' } },
  { name: 'Glob', input: { pattern: 'ssh_link/**' } },
  { name: 'Glob', input: { pattern: '{a.txt,../.ssh/id_rsa}' } },
  { name: 'Glob', input: { pattern: '*', path: 'link_out' } },
  { name: 'Read', input: { file_path: 'link_out/secret.txt' } },
  { name: 'Read', input: { file_path: '../.ssh/id_rsa' } },
];

describe('Grep, Glob and Read stay inside --cwd (item 1)', () => {
  it.each([
    'default',
    'acceptEdits',
    'bypassPermissions',
    'plan',
  ])('in %s mode: brace expansion, symlinked directories and absolute patterns leak nothing', async (mode) => {
    const run = await scriptedRun([ESCAPES], { cwd: proj, work, args: ['--permission-mode', mode] });
    expect(run.status, run.cli.stderr).toBe('completed');
    ESCAPES.forEach((call, i) => {
      const r = run.result(`t0_${i}`);
      expect(r.content, `${call.name} ${JSON.stringify(call.input)}: ${r.content}`).not.toContain(
        'KEY-MATERIAL',
      );
      // File names from outside are a leak too; a message may quote the pattern or path it was given
      // (a denial names the path it refused).
      if (r.outcome === 'denied') return;
      let listed = r.content;
      for (const v of Object.values(call.input as Record<string, string>)) listed = listed.split(v).join('');
      expect(listed, `${call.name} ${JSON.stringify(call.input)}: ${r.content}`).not.toMatch(
        /id_rsa|secret\.txt/,
      );
    });
    // The patterns that climb out are refused by the policy, whatever the mode.
    for (const id of ['t0_0', 't0_1', 't0_5', 't0_6', 't0_7', 't0_10']) {
      expect(run.result(id)).toMatchObject({ isError: true, outcome: 'denied' });
      expect(run.result(id).content).toMatch(/could reach outside the working directory/);
    }
    // The symlinked directories are not listed: the run says so instead of answering from outside.
    expect(run.result('t0_2').content).toMatch(/outside the working directory not searched/);
    expect(run.result('t0_8').content).toMatch(/outside the working directory not listed/);
    expect(run.result('t0_4').isError).toBe(true);
    // And a legitimate search in the same batch still works.
    expect(run.logText).not.toContain(KEY);
  });

  it('a normal search still finds what is inside', async () => {
    const run = await scriptedRun(
      [
        [
          { name: 'Grep', input: { pattern: 'hello', output_mode: 'content' } },
          { name: 'Glob', input: { pattern: '*.{txt,md}' } },
        ],
      ],
      { cwd: proj, work, args: ['--permission-mode', 'plan'] },
    );
    expect(run.result('t0_0').content).toBe('a.txt:1:hello KEY');
    expect(run.result('t0_1').content).toBe('a.txt');
  });
});

describe('Bash rules (item 2)', () => {
  it("plan mode with Bash(echo:*): echo $'\\'' ; touch PWNED #' runs nothing", async () => {
    const dir = path.join(root, 'bash-plan');
    await mkdir(dir);
    const run = await scriptedRun([[{ name: 'Bash', input: { command: "echo $'\\'' ; touch PWNED #'" } }]], {
      cwd: dir,
      work,
      args: ['--permission-mode', 'plan', '--allow', 'Bash(echo:*)'],
    });
    expect(existsSync(path.join(dir, 'PWNED'))).toBe(false);
    expect(run.result('t0_0')).toMatchObject({ isError: true, outcome: 'denied' });
  });

  it('the same command is not allowed by Bash(echo:*) in default mode either (it is asked)', async () => {
    const dir = path.join(root, 'bash-default');
    await mkdir(dir);
    const run = await scriptedRun([[{ name: 'Bash', input: { command: "echo $'\\'' ; touch PWNED #'" } }]], {
      cwd: dir,
      work,
      args: ['--allow', 'Bash(echo:*)'],
    });
    expect(existsSync(path.join(dir, 'PWNED'))).toBe(false);
    expect(run.result('t0_0').content).toMatch(/needs approval/);
  });

  it('a deny rule Bash(rm:*) holds against /bin/rm, command rm, "rm", r\\m, env rm and friends', async () => {
    const dir = path.join(root, 'bash-deny');
    await mkdir(dir);
    const spellings = [
      '/bin/rm x0',
      'command rm x1',
      '"rm" x2',
      'r\\m x3',
      'env rm x4',
      "'r'm x5",
      'nice -n 5 rm x6',
      'sudo -u root rm x7',
      'echo x8 | xargs rm',
      'find . -name x9 -exec rm {} +',
      'bash -c "rm x10"',
      'eval rm x11',
      'ls; rm x12',
      'true || rm x13',
      '/usr/bin/../bin/rm x14',
      'r? x15',
      '$(printf rm) x16',
      'timeout 5 rm x17',
      'exec rm x18',
    ];
    for (let i = 0; i < spellings.length; i++) await writeFile(path.join(dir, `x${i}`), '');
    const run = await scriptedRun([spellings.map((command) => ({ name: 'Bash', input: { command } }))], {
      cwd: dir,
      work,
      args: ['--permission-mode', 'bypassPermissions', '--deny', 'Bash(rm:*)'],
    });
    spellings.forEach((command, i) => {
      expect(existsSync(path.join(dir, `x${i}`)), command).toBe(true);
      expect(run.result(`t0_${i}`), command).toMatchObject({ isError: true, outcome: 'denied' });
    });
    // And a command the rule does not name still runs.
    const ok = await scriptedRun([[{ name: 'Bash', input: { command: 'ls x0' } }]], {
      cwd: dir,
      work,
      args: ['--permission-mode', 'bypassPermissions', '--deny', 'Bash(rm:*)'],
    });
    expect(ok.result('t0_0')).toMatchObject({ isError: false, outcome: 'ok' });
  });
});

describe('special files and unusable paths (items 6, 7)', () => {
  it('Read refuses a FIFO and a socket at once, even four in parallel, and the run goes on', async () => {
    const dir = path.join(root, 'special');
    await mkdir(dir);
    execFileSync('mkfifo', [path.join(dir, 'fifo')]);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(path.join(dir, 'sock'), resolve));
    try {
      const fifoReads = Array.from({ length: 4 }, () => ({ name: 'Read', input: { file_path: 'fifo' } }));
      const run = await scriptedRun(
        [
          [
            ...fifoReads,
            { name: 'Read', input: { file_path: 'sock' } },
            { name: 'Grep', input: { pattern: 'x' } },
          ],
          [{ name: 'Write', input: { file_path: 'after.txt', content: 'still here\n' } }],
        ],
        { cwd: dir, work, args: ['--permission-mode', 'acceptEdits'], timeoutMs: 60_000 },
      );
      expect(run.status).toBe('completed');
      for (let i = 0; i < 4; i++)
        expect(run.result(`t0_${i}`).content).toMatch(/fifo is a FIFO, not a regular file/);
      expect(run.result('t0_4').content).toMatch(/sock is a socket, not a regular file/);
      expect(run.result('t0_5').content).toMatch(/No matches/);
      expect(run.result('t1_0').isError).toBe(false);
    } finally {
      server.close();
    }
  });

  it('ENAMETOOLONG, ELOOP and ENOTDIR are that call’s error; the other calls and the loop go on', async () => {
    const dir = path.join(root, 'errors');
    await mkdir(dir);
    await writeFile(path.join(dir, 'ok.txt'), 'fine\n');
    await symlink('loop', path.join(dir, 'loop'));
    const long = 'a'.repeat(5000);
    const run = await scriptedRun(
      [
        [
          { name: 'Read', input: { file_path: long } },
          { name: 'Read', input: { file_path: `d/${long}/x` } },
          { name: 'Glob', input: { pattern: '*', path: long } },
          { name: 'Grep', input: { pattern: 'x', path: long } },
          { name: 'Read', input: { file_path: 'loop' } },
          { name: 'Read', input: { file_path: 'ok.txt/x' } },
          { name: 'Read', input: { file_path: 'ok.txt' } },
        ],
        [
          { name: 'Write', input: { file_path: long, content: 'x' } },
          { name: 'Edit', input: { file_path: `${long}/y`, old_string: '', new_string: 'x' } },
        ],
      ],
      { cwd: dir, work, args: ['--permission-mode', 'acceptEdits'] },
    );
    expect(run.status, run.cli.stderr).toBe('completed');
    for (const id of ['t0_0', 't0_1', 't0_2', 't0_3', 't0_4', 't0_5', 't1_0', 't1_1']) {
      expect(run.result(id).isError, id).toBe(true);
      expect(run.result(id).content.length, id).toBeLessThan(1000);
    }
    expect(run.result('t0_0').content).toMatch(/ENAMETOOLONG/);
    expect(run.result('t0_6')).toMatchObject({ isError: false, outcome: 'ok' });
  });
});
