import { describe, expect, it } from 'vitest';
import { sedScriptRisk } from '../../../src/tools/permissions/sedScript.ts';
import { decideBash as decide } from '../../support/bashDecision.ts';

/**
 * The second adversarial pass over Bash rules: arguments that turn an allowed program into a
 * command runner, words that xargs and find fill in, and shell options that hide a -c string.
 */

const RULES = [
  'Bash(npm test:*)',
  'Bash(npm run build:*)',
  'Bash(git status:*)',
  'Bash(git grep:*)',
  'Bash(git log:*)',
  'Bash(git diff:*)',
  'Bash(git clone:*)',
  'Bash(git submodule:*)',
  'Bash(find:*)',
  'Bash(tar:*)',
  'Bash(rsync:*)',
  'Bash(sort:*)',
  'Bash(rg:*)',
  'Bash(sed:*)',
  'Bash(awk:*)',
  'Bash(make test:*)',
  'Bash(go test:*)',
  'Bash(cargo test:*)',
  'Bash(man:*)',
  'Bash(xargs:*)',
  'Bash(echo:*)',
  'Bash(cat:*)',
];

describe('a prefix rule does not vouch for options that run or write something else', () => {
  it.each([
    "npm test '--node-options=--import=data:text/javascript,x'",
    "npm test '--node-opti=--import=data:text/javascript,x'",
    'npm test --node_options=x',
    'npm test --script-shell=./evil.sh',
    'npm test --userconfig ./evil.npmrc',
    'npm run build --prefix ../other',
    'git grep -Otouch x',
    'git grep -nO x',
    "git grep --open-files-in-pager='touch x' y",
    'git grep --open-files=x y',
    'git log --output=../../.bashrc',
    'git log --outp=x',
    'git diff --output /tmp/x',
    "git clone --upload-pack='touch x' src dst",
    "git clone -u 'touch x' src dst",
    'git clone --config core.fsmonitor=x src dst',
    "git submodule foreach 'rm -rf ~'",
    'find . -delete',
    'find . -name x -fprint /tmp/out',
    "tar -cf a.tar --checkpoint-action=exec='touch x' .",
    "tar --to-command='sh -c x' -xf a.tar",
    'tar --to-c=x -xf a.tar',
    "tar -I 'touch x' -xf a.tar",
    "tar xIf 'touch x' a.tar",
    'tar -xvF x -f a.tar',
    'rsync -e "sh -c x" a b',
    'rsync -avze x a b',
    "rsync --rsync-path='touch x' a b",
    "sort --compress-program='touch x' f",
    'sort -o ../../.bashrc f',
    'rg --pre=rm x',
    'rg --pre rm x',
    "sed '1e touch x' f",
    "sed 's/a/b/e' f",
    "sed 's/a/b/w out' f",
    "sed -n 'w out' f",
    "sed -e p -e 'W out' f",
    'sed -i s/a/b/ f',
    'sed -ni s/a/b/p f',
    'sed --in-place=.bak s/a/b/ f',
    'sed -f script.sed f',
    "sed '/x/{e touch y' f",
    'awk \'BEGIN{system("touch x")}\'',
    'awk \'{print > "out"}\' f',
    'awk \'{print | "sh"}\' f',
    'awk -f prog.awk f',
    'awk \'@load "x"\' f',
    "make test 'CC=touch x;'",
    'make test --eval=x',
    'make test -f other.mk',
    'go test -exec=./x ./...',
    'go test -toolexec ./x ./...',
    'cargo test --config \'target.x.runner="x"\'',
    'cargo test -Zunstable-options',
    "man -P 'touch x' ls",
    'man --html=x ls',
    // A glob may expand to a file the model named like an option (`--pre=rm`).
    'rg foo *',
    'sed -n 1p -*',
    // xargs appends its input: the options are not known.
    'echo --pre=rm | xargs rg foo',
  ])('%j is asked', async (cmd) => {
    expect((await decide({ mode: 'default', allow: RULES }, cmd)).behavior).toBe('ask');
  });

  it.each([
    'npm test',
    'npm test --silent',
    'npm test -- --node-options=x --watch=false',
    'npm test --workspace app',
    'npm run build -w app --if-present',
    'git status --short',
    'git grep -n foo -- src',
    'git log --oneline -5',
    'git diff --stat HEAD~1',
    'find . -name "*.ts" -newer x',
    'tar czf out.tgz src',
    'tar -xzf a.tgz -C dir',
    'rsync -av a b',
    'sort -u f',
    'rg -n foo src',
    'rg foo -- *',
    'sed -n 1,10p f',
    "sed 's/hello/world/g' f",
    "sed -e 's/a/b/' -e '/x/d' f",
    "sed --sandbox 's/a/b/e' f",
    "awk '{print $1}' f",
    "awk -F: -v n=1 '{print $n}' f",
    'make test',
    'make test -j4',
    'go test -run TestX -v ./...',
    'cargo test -- --nocapture',
    'man ls',
    'echo a | xargs echo',
  ])('%j is allowed', async (cmd) => {
    expect((await decide({ mode: 'default', allow: RULES }, cmd)).behavior).toBe('allow');
  });

  it('a rule naming only a command runner (git, npm, make, go, cargo) trusts all its uses', async () => {
    const allow = ['Bash(git:*)', 'Bash(npm:*)', 'Bash(find:*)'];
    expect((await decide({ mode: 'default', allow }, 'git -c core.pager=x log')).behavior).toBe('allow');
    expect((await decide({ mode: 'default', allow }, 'npm test --script-shell=x')).behavior).toBe('allow');
    // find is a search tool: `Bash(find:*)` is not a rule for deleting.
    expect((await decide({ mode: 'default', allow }, 'find . -delete')).behavior).toBe('ask');
  });

  it('git global options that change the repository or configuration are asked', async () => {
    for (const cmd of [
      'git -c core.fsmonitor=x status',
      'git -C ../other status',
      'git --git-dir=x status',
    ]) {
      expect((await decide({ mode: 'default', allow: ['Bash(git status:*)'] }, cmd)).behavior, cmd).toBe(
        'ask',
      );
    }
    expect(
      (await decide({ mode: 'default', allow: ['Bash(git status:*)'] }, 'git --no-pager status')).behavior,
    ).toBe('ask'); // the rule names `git status`; `git --no-pager status` does not start with it
  });
});

describe('xargs and find fill words in at run time', () => {
  it('xargs -I replaces words an allow rule matched: asked', async () => {
    const allow = ['Bash(git status:*)', 'Bash(echo:*)', 'Bash(xargs:*)', 'Bash(cp:*)'];
    expect(
      (await decide({ mode: 'default', allow }, 'echo init | xargs -I status git status')).behavior,
    ).toBe('ask');
    expect((await decide({ mode: 'default', allow }, 'echo push | xargs -istatus git status')).behavior).toBe(
      'ask',
    );
    // Replaced arguments of a command whose rule names only its name are fine.
    expect((await decide({ mode: 'default', allow }, 'echo a | xargs -I{} cp {} dst/')).behavior).toBe(
      'allow',
    );
  });

  it('an exact rule never matches a command xargs appends arguments to', async () => {
    const allow = ['Bash(git status)', 'Bash(echo:*)', 'Bash(xargs:*)'];
    expect((await decide({ mode: 'default', allow }, 'git status')).behavior).toBe('allow');
    expect((await decide({ mode: 'default', allow }, 'echo x | xargs git status')).behavior).toBe('ask');
  });

  it.each([
    'find /bin -name rm -exec {} x \\;',
    'find . -exec sh -c {} \\;',
    'echo \'"rm x"\' | xargs sh -c',
    'echo rm x | xargs -I X env X',
    'echo "rm x" | xargs -0 env -S',
    "bash -o errexit -c 'rm x'",
    "bash +O extglob -c 'rm x'",
    "bash --rcfile /dev/null -c 'rm x'",
    "bash -c -- 'rm x'",
    "sudo bash -eo pipefail -c 'rm x'",
    "su root -c 'rm x'",
    "su -c'rm x' root",
    'echo rm x | sh',
    'sh < script.sh',
    'bash script.sh',
    'echo -rf / | xargs rm',
    "PS4='$(rm x)' bash -xc :",
    'BASH_ENV=./x.sh bash -c ls',
    "GIT_SSH_COMMAND='rm x' git fetch",
    "script -qc 'rm x' /dev/null",
    "flock f -c 'rm x'",
    "ssh host 'rm x'",
    'ssh host r\\m x',
    "parallel 'rm {}' ::: x",
  ])('%j is never allowed past Bash(rm:*)', async (cmd) => {
    const r = await decide({ mode: 'bypassPermissions', deny: ['Bash(rm:*)'] }, cmd);
    expect(r.behavior === 'ask' || r.behavior === 'deny', `${cmd}: ${r.behavior}`).toBe(true);
  });

  it('harmless variables do not blind the deny rules', async () => {
    for (const cmd of ['NODE_ENV=test ls', 'LC_ALL=C sort f', 'CI=1 FORCE_COLOR=0 ls']) {
      expect((await decide({ mode: 'bypassPermissions', deny: ['Bash(rm:*)'] }, cmd)).behavior, cmd).toBe(
        'allow',
      );
    }
  });

  it('an exact deny rule catches the words xargs appends', async () => {
    const r = await decide({ mode: 'bypassPermissions', deny: ['Bash(rm -rf /)'] }, 'echo / | xargs rm -rf');
    expect(r.behavior).toBe('deny');
  });
});

describe('small holes in the first pass', () => {
  it.each([
    'command printf -v PATH /tmp/evil',
    'time printf -v PATH /tmp/evil',
    'builtin printf -v x y',
  ])('%j assigns through the printf builtin: asked', async (cmd) => {
    const allow = ['Bash(printf:*)', 'Bash(command:*)', 'Bash(time:*)', 'Bash(builtin:*)'];
    expect((await decide({ mode: 'default', allow }, cmd)).behavior).toBe('ask');
  });

  it('a redirection from /dev/tcp or /dev/udp opens a connection: asked', async () => {
    for (const cmd of ['cat < /dev/tcp/example.com/80', 'echo x 0</dev/udp/1.2.3.4/53']) {
      expect((await decide({ mode: 'default', allow: RULES }, cmd)).behavior, cmd).toBe('ask');
    }
  });
});

describe('sedScriptRisk', () => {
  it.each([
    ['p', undefined],
    ['1,10p', undefined],
    ['s/a/b/g;/x/d', undefined],
    ['/^#/!s|a|b|2p', undefined],
    ['y/abc/xyz/', undefined],
    ['$a\\\nsome text', undefined],
    [':a;N;ba', undefined],
    ['e ls', 'e'],
    ['1e ls', 'e'],
    ['s/a/b/e', 'e'],
    ['s/a/b/gw out', 'w'],
    ['w out', 'w'],
    ['/x/W out', 'W'],
    ['s/a/b', 'unterminated'],
    ['k', 'does not check'],
  ])('%j', (script, expected) => {
    const why = sedScriptRisk(script);
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toContain(expected);
  });
});
