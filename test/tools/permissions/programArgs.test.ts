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
  'Bash(gawk:*)',
  'Bash(mawk:*)',
  'Bash(zip:*)',
  'Bash(git archive:*)',
  'Bash(git send-email:*)',
  'Bash(git apply:*)',
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

  // Issue 18 items 1–3 and the adversarial pass after them (docs/security.md, "found and closed").
  it.each([
    // sed: labels and v end at `;` or a blank; the script after `--`; -l's value.
    "sed -n ':a;e touch X' f",
    "sed -n 'v;e touch X' f",
    "sed -n 'ta;e touch X\n:a' f",
    "sed -n 'b x e touch X' f",
    "sed -n ':a}e touch X' f",
    "sed -n -- '1e touch X' f",
    "sed -n -- '1w ../outside.txt' f",
    "sed -nl 5 '1e touch X' f",
    "sed -n --line 5 '1e touch X' f",
    "sed -n -l5 -- '1e touch X' f",
    "sed -n 's/[/]/x/w out' f",
    "sed -n 's/a/b/ w out' f",
    "sed --exp='1e touch X' f",
    'sed --in=.bak s/a/b/ f',
    // sed compiles each -e as it reads it: a later --sandbox does not cover it.
    "sed -e 'w out' --sandbox f",
    'sed -n x* f',
    "sed -l x* 'p' f",
    // awk: option values are not options; awk's --sandbox is not trusted; gawk's only before the program.
    `awk -F -S 'BEGIN{system("touch X")}' f`,
    `awk -F --sandbox 'BEGIN{system("touch X")}' f`,
    `awk --sandbox 'BEGIN{system("touch X")}' f`,
    `awk -S 'BEGIN{system("touch X")}' f`,
    `mawk -W sandbox 'BEGIN{system("touch X")}' f`,
    `gawk 'BEGIN{system("touch X")}' --sandbox f`,
    `gawk -F -S 'BEGIN{system("touch X")}' f`,
    `gawk --so='BEGIN{system("touch X")}' f`,
    "gawk -o../out '{print}' f",
    "gawk --pretty-print=../out '{print}' f",
    "gawk -p/tmp/prof '{print}' f",
    'gawk -f prog.awk f',
    "gawk -i inc.awk '{print}' f",
    "gawk -l ext '{print}' f",
    "gawk '{print}' /inet/tcp/0/example.com/80",
    'awk \'BEGIN{getline < "/inet/tcp/0/example.com/80"}\'',
    'awk x* f',
    'awk -F x* f',
    // sort: getopt abbreviations, `--` as a value, -y giving its word back.
    'sort --o=../outside.txt f',
    'sort --ou ../outside.txt f',
    'sort --comp=sh f',
    'sort -T -- -o out f',
    'sort -y -o out f',
    'sort -ry -o out f',
    'sort -to -o out f',
    'sort +1 -2 f',
    // The other programs in the tables.
    "git grep -e -- '--open-files-in-pager=touch X'",
    "git grep -e -- --open-files-in-pager='touch x' -- x",
    'git archive --o=../x HEAD',
    'git archive -o ../x HEAD',
    'git send-email --smtp-server=./x a.patch',
    'git apply --unsafe-paths a.patch',
    'tar -cf localhost:x --rs=/bin/sh a.txt',
    'tar -cf h:x --rmt=/bin/sh a.txt',
    'tar --to=x -xf a.tar',
    'tar cbf 20 -- --to-command=x a',
    "make test ' CC=touch x;'",
    "make test 'C/C=x'",
    'make test -- CC=x',
    'rg -e -- *',
    'rg --hostname-bin=./x foo',
    'rg --pr=x foo',
    'man -C ./x.conf ls',
    'man --config-file=./x.conf ls',
    'rsync --daemon --config=x.conf',
    'rsync -M--rsh=x a b',
    "zip -T -TT 'touch x' a.zip f",
    'zip -TTx a.zip f',
    'zip --unz=x a.zip f',
    'go test -vettool=./x ./...',
    'go test ./... -- -exec=./x',
    'cargo test --conf x',
  ])('%j is asked (issue 18)', async (cmd) => {
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
    // Issue 18: what the readers now read exactly is still allowed.
    "sed -n ':a;/x/p' f",
    'sed -n -- 1p f',
    "sed -e 's/[/]/x/' f",
    "sed --sandbox -e 'w out' f",
    'sed --quiet --expression=p -- f',
    "sed -n 'a\\\ne touch x' f",
    'gawk --sandbox \'BEGIN{system("x")}\' f',
    "gawk -S -F: '{print $1}' f",
    "gawk -F: '{print $1}' -- *",
    "mawk -F, '{print $2}' f",
    'sort -t, -k2,2n -- f',
    'sort -y0 -r f',
    'sort --rev f',
    'tar -cf a.tar --checkpoint=1 src',
    'git grep -n foo -- src',
    'git archive --format=tar HEAD',
    'rg foo -- *',
    'zip -r a.zip src',
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
    ['k', 'unknown command'],
    // GNU sed's grammar, as compile.c reads it (issue 18 item 1).
    [':a;e ls', 'e command'],
    ['v;e ls', 'e command'],
    ['v 4.2 e ls', 'e command'],
    ['ta;e ls\n:a', 'e command'],
    ['b x e ls', 'e command'],
    ['{b};e ls', 'e command'],
    ['b#x\ne ls', 'e command'],
    ['s/[/]/x/w out', 'w flag'],
    ['/[/]/w out', 'w command'],
    ['s/[[:alpha:]/]/x/e', 'e flag'],
    ['s/a/b/ e', 'e flag'],
    ['s/a/b/g w out', 'w flag'],
    ['y/a/b/;e ls', 'e command'],
    ['1!e ls', 'e command'],
    ['$!{N;e ls\n}', 'e command'],
    ['s\u00e9a\u00e9b\u00e9', 'delimiter'],
    ['s\\a\\b\\', 'delimiter'],
    ['p x', 'extra characters'],
    [':a;N;$!ba;s/\\n/ /g', undefined],
    ['/[/]/p', undefined],
    ['s/a/b/ g', undefined],
    ['1~2p;0~3d', undefined],
    ['\\%x%p', undefined],
    ['a\\\ne ls', undefined],
    ['i foo;e ls', undefined],
    ['#e ls', undefined],
    ['r /etc/hosts', undefined],
  ])('%j', (script, expected) => {
    const why = sedScriptRisk(script);
    if (expected === undefined) expect(why).toBeUndefined();
    else expect(why).toContain(expected);
  });

  it('reads the chunks of several -e as sed compiles them: a\\ text goes on into the next', () => {
    expect(sedScriptRisk(['a\\', 'e ls'])).toBeUndefined();
    expect(sedScriptRisk(['a foo\\', 'e ls'])).toBeUndefined();
    expect(sedScriptRisk(['a foo', 'e ls'])).toContain('e command');
    expect(sedScriptRisk(['p', '1w out'])).toContain('w command');
  });
});

describe('wrappers that take variables out of the environment', () => {
  it.each([
    'env -u GIT_CONFIG_COUNT git status',
    'env -i git status',
    'env - git status',
    'env -iu X git status',
    'env --unset=GIT_CONFIG_COUNT git status',
    'exec -c git status',
  ])('%j is asked: it would remove what keeps git off a planted repository', async (cmd) => {
    const allow = ['Bash(env:*)', 'Bash(exec:*)', 'Bash(git status)'];
    expect((await decide({ mode: 'default', allow }, cmd)).behavior).toBe('ask');
  });

  it('other env options are still read through', async () => {
    const allow = ['Bash(env:*)', 'Bash(git status)'];
    expect((await decide({ mode: 'default', allow }, 'env -C sub git status')).behavior).toBe('allow');
  });
});
