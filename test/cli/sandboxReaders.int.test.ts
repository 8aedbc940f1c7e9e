import { execFileSync } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedRun, scriptedRun, type ToolCall } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

/**
 * Issue 18 items 1–3 and the adversarial pass after them: allow rules for text tools and archive
 * tools vouched for commands whose real program read its arguments another way than reloop did
 * (a label ending at `;`, a script after `--`, an option's value taken for an option, an
 * abbreviated long option). Each command here ran its payload, or wrote outside the working
 * directory, through the real CLI before the fix; now each is asked (and, with `--on-ask deny`,
 * not run), and the log says why.
 */

let root: string;
let work: string;

beforeAll(async () => {
  root = await tempDir('reloop-readers-');
  work = path.join(root, 'work');
});
afterAll(() => removeDir(root));

/** A project `proj` inside its own folder, so that `../outside*` lands next to it, not in another test's. */
async function project(name: string): Promise<{ base: string; dir: string }> {
  const base = path.join(root, name);
  const dir = path.join(base, 'proj');
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'f'), 'a\ntouch PWN_PATTERN\n');
  return { base, dir };
}

const bash = (command: string): ToolCall => ({ name: 'Bash', input: { command } });

async function runAll(
  dir: string,
  commands: readonly string[],
  allow: readonly string[],
): Promise<ScriptedRun> {
  const run = await scriptedRun([commands.map(bash)], {
    cwd: dir,
    work,
    args: allow.flatMap((r) => ['--allow', r]),
    timeoutMs: 120_000,
  });
  expect(run.status, run.cli.stderr).toBe('completed');
  return run;
}

function expectAsked(run: ScriptedRun, attacks: readonly { command: string; why: RegExp }[]): void {
  attacks.forEach(({ command, why }, i) => {
    expect(run.result(`t0_${i}`), command).toMatchObject({ isError: true, outcome: 'denied' });
    expect(run.result(`t0_${i}`).content, command).toMatch(/needs approval/);
    expect(run.decision(`t0_${i}`), command).toMatch(why);
  });
}

function expectRan(run: ScriptedRun, from: number, fine: readonly string[]): void {
  fine.forEach((command, k) => {
    expect(run.result(`t0_${from + k}`), command).toMatchObject({ isError: false, outcome: 'ok' });
  });
}

async function pwned(...dirs: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const d of dirs) for (const f of await readdir(d)) if (/^(PWN|outside)/.test(f)) out.push(f);
  return out;
}

describe('Bash(sed:*) (item 1)', () => {
  it('a label or v ended by `;`, a label line, a script after `--`: e and w are seen, nothing runs or is written', async () => {
    const { base, dir } = await project('sed');
    const attacks = [
      { command: "sed -n ':a;e touch PWN1' f", why: /the e command runs a command/ },
      { command: "sed -n 'v;e touch PWN2' f", why: /the e command runs a command/ },
      { command: "sed -n 'ta;e touch PWN3\n:a' f", why: /the e command runs a command/ },
      { command: "sed -n -- '1e touch PWN4' f", why: /the e command runs a command/ },
      { command: "sed -n -- '1w ../outside.txt' f", why: /the w command writes a file/ },
      // The adversarial pass: `-l` takes a value inside a cluster and abbreviated; labels end at a blank.
      { command: "sed -nl 5 '1e touch PWN5' f", why: /the e command runs a command/ },
      { command: "sed -n --line 5 '1e touch PWN6' f", why: /the e command runs a command/ },
      { command: "sed -n 't x e touch PWN7\n:x' f", why: /the e command runs a command/ },
    ];
    const fine = ["sed -n '1p' f", "sed -n ':a;/a/p' f", 'sed -n -- 2p f'];
    const run = await runAll(dir, [...attacks.map((a) => a.command), ...fine], ['Bash(sed:*)']);
    expect(await pwned(dir, base)).toEqual([]);
    expectAsked(run, attacks);
    expectRan(run, attacks.length, fine);
  });
});

describe('Bash(awk:*) (item 2)', () => {
  it("-F's value is not the sandbox flag; awk's --sandbox is not trusted (BWK awk ignores it)", async () => {
    const { base, dir } = await project('awk');
    const attacks = [
      { command: `awk -F -S 'BEGIN{system("touch PWN1")}' f`, why: /may run a command/ },
      { command: `awk -F --sandbox 'BEGIN{system("touch PWN2")}' f`, why: /may run a command/ },
      // gawk stops reading options at its program: a later --sandbox is a file name.
      { command: `gawk 'BEGIN{system("touch PWN3")}' --sandbox f`, why: /may run a command/ },
    ];
    const fine = ["awk -F: '{print $1}' f", "awk -v x=1 '{print x}' f"];
    const run = await runAll(
      dir,
      [...attacks.map((a) => a.command), ...fine],
      ['Bash(awk:*)', 'Bash(gawk:*)'],
    );
    expect(await pwned(dir, base)).toEqual([]);
    expectAsked(run, attacks);
    expectRan(run, attacks.length, fine);
  });
});

describe('Bash(sort:*) (item 3)', () => {
  it('--o is --output, a `--` after -T is its value, -y gives its word back: no file is written', async () => {
    const { base, dir } = await project('sort');
    const attacks = [
      { command: 'sort --o=../outside1.txt f', why: /it writes the file it is given/ },
      { command: 'sort -T -- -o ../outside2.txt f', why: /it writes the file it is given/ },
      { command: 'sort -y -o ../outside3.txt f', why: /it writes the file it is given/ },
    ];
    const fine = ['sort -r f', 'sort -t, -k1,1 -- f'];
    const run = await runAll(dir, [...attacks.map((a) => a.command), ...fine], ['Bash(sort:*)']);
    expect(await pwned(dir, base)).toEqual([]);
    expectAsked(run, attacks);
    expectRan(run, attacks.length, fine);
  });
});

describe('the adversarial pass over the other programs in the tables', () => {
  it('git grep -e --, tar --rs, make " CC=…": asked, nothing runs', async () => {
    const { base, dir } = await project('others');
    execFileSync('git', ['init', '-q'], { cwd: dir });
    await writeFile(path.join(dir, 'a.txt'), '--\n');
    // What tar's remote shell (/bin/sh here) runs: the host part of `localhost:x`, as a script.
    await writeFile(path.join(dir, 'localhost'), 'touch PWN_TAR\n');
    await writeFile(path.join(dir, 'Makefile'), 'test:\n\t$(CC) --version >/dev/null\n');
    const attacks = [
      // -e takes `--` as its pattern; the option after it is still an option.
      {
        command: "git grep --no-index -e -- '--open-files-in-pager=touch PWN_GREP'",
        why: /open-files-in-pager runs a command/,
      },
      // getopt takes any unambiguous prefix: --rs is --rsh-command.
      { command: 'tar -cf localhost:x --rs=/bin/sh a.txt', why: /rsh-command runs a command/ },
      // make strips the blank: this sets CC.
      { command: "make test ' CC=touch PWN_MAKE;'", why: /a variable set here may run anything/ },
    ];
    const fine = ['git grep --no-index -n -e . -- a.txt', 'tar -cf t.tar a.txt'];
    const run = await runAll(
      dir,
      [...attacks.map((a) => a.command), ...fine],
      ['Bash(git grep:*)', 'Bash(tar:*)', 'Bash(make test:*)'],
    );
    expect(await pwned(dir, base)).toEqual([]);
    expectAsked(run, attacks);
    expectRan(run, attacks.length, fine);
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('--\n');
  });
});
