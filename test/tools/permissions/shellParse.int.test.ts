import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom as seeded } from '../../../src/runtime/determinism.ts';
import { parseShell } from '../../../src/tools/permissions/shellParse.ts';
import { removeDir, tempDir } from '../toolHarness.ts';

/**
 * Differential test: whatever the parser accepts as fully accounted for, bash itself must run
 * exactly as the parser says — never a command the parser did not list, never other words.
 *
 * Every input is eval'd by one bash with PATH pointing nowhere; command names are made of the
 * letters q, x, z only, so every command bash runs is "not found" and lands in
 * command_not_found_handle, which logs its argv. Each input runs twice, with every command
 * succeeding and then failing, so both sides of && and || get their turn.
 */

let root: string;
beforeAll(async () => {
  root = await tempDir('reloop-shparse-');
});
afterAll(() => removeDir(root));

const TOKENS = [
  'qq',
  'qq',
  'xz',
  'zq',
  'q',
  ' ',
  ' ',
  ' ',
  '\t',
  '\n',
  ';',
  '&',
  '|',
  '&&',
  '||',
  '|&',
  "'",
  '"',
  '\\',
  '\\\n',
  '#',
  '*',
  '?',
  '[',
  ']',
  '{',
  '}',
  '{}',
  ',',
  '$',
  "$'",
  '`',
  '(',
  ')',
  '<',
  '>',
  '>>',
  '2>&1',
  '>/dev/null',
  '>&2',
  '=',
  'q=',
  '!',
  '~',
  '-',
  '0',
  '1',
  "\\'",
  '\\"',
  '"\\\\"',
  '\r',
  '<>',
  '>|',
  '&>',
  '3>&-',
  '<&0',
  '\\#',
  '"#"',
];

const CORPUS = [
  "qq $'\\'' ; zq PWNED #'",
  "qq '\\'' ; zq PWNED #'",
  'q\\q x',
  '"qq" x',
  '\'q\'"q" x',
  'qq "a\\"b" \'c\\\'',
  'qq a\\\nb',
  'qq "a\\\nb"',
  'qq "a\\qb"',
  'qq #comment\nxz',
  'qq a#b',
  'qq&&xz||zq;q|xz|&zq&',
  'qq 2>&1 | xz >/dev/null',
  '! qq',
  'qq {} x',
  'qq ~ ~/x x~',
  'qq=1 xz',
  'xz q=1',
  '"q=1" xz',
  'qq \\; xz',
  "qq ';' xz",
  'qq \\\\ xz',
  'qq "\\\\"',
  'qq *q* [x] ?',
  'qq\\\n;xz',
  // Found by this test's random inputs, each once a disagreement with bash:
  '3>&-xz',
  ' \r3>&-qq;3>&-1',
  '0\t0&>q&',
  "\\'2>&1>\\\n zq",
  'q\\\n=qq 1qq',
  '>&2!>&2\t!\t',
];

function accepted(src: string): boolean {
  const p = parseShell(src);
  if (p.opaque) return false;
  // A file written by one command could make a later glob expand: not a parser question.
  const writes = p.commands.some((c) => c.redirects.some((r) => r.kind === 'write'));
  const globs = p.commands.some((c) => c.words.some((w) => w.glob));
  // ~+ and ~- are $PWD and $OLDPWD: expansions the parser flags (glob) but does not perform.
  const tildes = p.commands.some((c) => c.words.some((w) => /~[-+\d]/.test(w.value)));
  return !(writes && globs) && !tildes;
}

const DRIVER = `
command_not_found_handle() {
  # A file per process: background jobs and pipeline parts log at the same time.
  { printf '%s\\037' "$@"; printf '\\036'; } >> "$LOGDIR/$RET-$IDX.$BASHPID"
  return $RET
}
for RET in 0 1; do
  for ((IDX = 0; IDX < N; IDX++)); do
    IFS= read -r -d '' SRC < "$INDIR/$IDX"
    ( cd "$WORKDIR/$RET-$IDX" && eval "$SRC"; wait ) </dev/null >/dev/null 2>&1
  done
done
`;

function runAll(inputs: string[]): string[][][][] {
  const indir = path.join(root, 'in');
  const logdir = path.join(root, 'log');
  const workdir = path.join(root, 'work');
  for (const d of [indir, logdir, workdir]) mkdirSync(d, { recursive: true });
  inputs.forEach((src, i) => {
    writeFileSync(path.join(indir, String(i)), src);
    for (const ret of [0, 1]) mkdirSync(path.join(workdir, `${ret}-${i}`), { recursive: true });
  });
  // The driver runs with PATH pointing nowhere, so bash itself is found first.
  const bash = spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim();
  const r = spawnSync(bash, ['-c', DRIVER], {
    env: {
      PATH: '/nonexistent',
      HOME: '~',
      N: String(inputs.length),
      INDIR: indir,
      LOGDIR: logdir,
      WORKDIR: workdir,
    },
    cwd: root,
    timeout: 120_000,
  });
  expect(r.status, String(r.stderr)).toBe(0);
  const logs = new Map<string, string>();
  for (const f of readdirSync(logdir)) {
    const key = f.slice(0, f.indexOf('.'));
    logs.set(key, (logs.get(key) ?? '') + readFileSync(path.join(logdir, f), 'utf8'));
  }
  return inputs.map((_, i) =>
    [0, 1].map((ret) => {
      const text = logs.get(`${ret}-${i}`) ?? '';
      return text
        .split('\x1e')
        .filter((c) => c !== '')
        .map((c) => c.split('\x1f').slice(0, -1));
    }),
  );
}

describe('parseShell against bash', () => {
  it('never lets bash run a command, or words, the parser did not report', { timeout: 180_000 }, () => {
    const rnd = seeded(20240917);
    const inputs = [...CORPUS];
    while (inputs.length < 2500) {
      let s = '';
      const n = 1 + Math.floor(rnd() * 9);
      for (let k = 0; k < n; k++) s += TOKENS[Math.floor(rnd() * TOKENS.length)];
      inputs.push(s);
    }
    const chosen = inputs.filter(accepted);
    // Enough of the random inputs must fall inside the accepted subset for this to test anything.
    expect(chosen.length).toBeGreaterThan(600);
    const ran = runAll(chosen);
    const failures: string[] = [];
    let commandsSeen = 0;
    chosen.forEach((src, i) => {
      const ours = parseShell(src)
        .commands.filter((c) => c.words.length)
        .map((c) => JSON.stringify(c.words.map((w) => w.value)));
      for (const run of ran[i] ?? []) {
        const left = [...ours];
        for (const argv of run) {
          commandsSeen++;
          const k = left.indexOf(JSON.stringify(argv));
          if (k < 0)
            failures.push(
              `${JSON.stringify(src)}: bash ran ${JSON.stringify(argv)}; parsed ${ours.join(' ')}`,
            );
          else left.splice(k, 1);
        }
      }
    });
    expect(failures.slice(0, 10)).toEqual([]);
    expect(commandsSeen).toBeGreaterThan(600);
  });

  it('stops at what it does not model, saying what it was', () => {
    expect(parseShell("echo $'\\'' ; touch PWNED #'").opaque).toBe("ANSI-C quoting ($'…')");
    expect(parseShell('cat <<EOF\nx\nEOF').opaque).toBe('a here-document');
    expect(parseShell('echo {a,b}').opaque).toBe('a brace expansion or group ({…})');
    expect(parseShell('(rm x)').opaque).toBe('a subshell, group or function definition');
    expect(parseShell('if true; then rm x; fi').opaque).toBe('the compound command "if"');
    expect(parseShell('echo "$(id)"').opaque).toBe('a command substitution ($(…)) inside double quotes');
  });
});
