import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seededRandom as seeded } from '../../../src/runtime/determinism.ts';
import { type OptionTable, resolveLong } from '../../../src/tools/permissions/getopt.ts';
import { argumentRisk } from '../../../src/tools/permissions/programArgs.ts';
import { readSedScript } from '../../../src/tools/permissions/sedScript.ts';
import { GAWK_OPTIONS, SED_OPTIONS, SORT_OPTIONS } from '../../../src/tools/permissions/textPrograms.ts';
import { removeDir, tempDir } from '../toolHarness.ts';

/**
 * Differential test, beside the bash one (shellParse.int.test.ts): the readers of sed scripts and
 * of sed, gawk/mawk and sort options, against GNU sed, gawk (and mawk) and GNU sort themselves.
 *
 * - The option tables: every letter, and every prefix of every long name (and `--a`…`--z`), as the
 *   real program's getopt reads it — unknown, ambiguous, which option, taking a value or not.
 * - Whatever the readers let through must be harmless when the real program runs it: random sed
 *   scripts and random argument lists for sed, awk and sort, each run in a directory of its own
 *   holding one input file. An allowed one must leave that directory as it was (no file made by
 *   `w`, `e touch`, `-o`, `system()`, `print >`), and `sed --sandbox` must find no e/w/r command in
 *   a script the reader saw none in.
 *
 * Runs many programs, so they are started by one bash loop, not one Node spawn each.
 */

let root: string;
beforeAll(async () => {
  root = await tempDir('reloop-progargs-');
});
afterAll(() => removeDir(root));

function has(program: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
}

const INPUT = 'a\ntouch PWN_PATTERN\nb/c\n';

interface Ran {
  /** Files in the run's directory afterwards, besides `input`. */
  made: string[];
  /** Whether `input` still holds what it held. */
  inputKept: boolean;
  stderr: string;
  stdout: string;
}

/**
 * Runs `argvs[i]` (argv[0] is the program) in a fresh directory each, with `input` in it, stdin
 * from /dev/null, LC_ALL=C, a 5 s limit per run.
 */
function runAll(name: string, argvs: readonly (readonly string[])[]): Ran[] {
  const base = path.join(root, name);
  const indir = path.join(base, 'in');
  const workdir = path.join(base, 'work');
  mkdirSync(indir, { recursive: true });
  argvs.forEach((argv, i) => {
    writeFileSync(path.join(indir, String(i)), argv.map((a) => `${a}\0`).join(''));
    const dir = path.join(workdir, String(i));
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'input'), INPUT);
  });
  const driver = `
for ((i = 0; i < N; i++)); do
  mapfile -d '' ARGS < "$INDIR/$i"
  cd "$WORKDIR/$i" || exit 1
  timeout 5 "\${ARGS[@]}" </dev/null >"$INDIR/$i.out" 2>"$INDIR/$i.err"
done
exit 0
`;
  const r = spawnSync('bash', ['-c', driver], {
    env: { ...process.env, LC_ALL: 'C', N: String(argvs.length), INDIR: indir, WORKDIR: workdir },
    timeout: 300_000,
  });
  expect(r.status, String(r.stderr)).toBe(0);
  return argvs.map((_, i) => {
    const dir = path.join(workdir, String(i));
    return {
      made: readdirSync(dir).filter((f) => f !== 'input'),
      inputKept: readFileSync(path.join(dir, 'input'), 'utf8') === INPUT,
      stderr: readFileSync(path.join(indir, `${i}.err`), 'utf8'),
      stdout: readFileSync(path.join(indir, `${i}.out`), 'utf8'),
    };
  });
}

/** What the policy's reader says of one argv: allowed by a rule naming the program, or why not. */
function verdict(argv: readonly string[]): string | undefined {
  return argumentRisk(
    argv,
    argv.map(() => false),
    false,
  )?.why;
}

// ---------------------------------------------------------------------------------------------
// The option tables

type Class = 'unknown' | 'ambiguous' | { id: string; arg: 'none' | 'required' | 'optional' };

function longClass(table: OptionTable, prefix: string): Class {
  const r = resolveLong(table, prefix);
  return typeof r === 'string' ? r : { id: r.option.id, arg: r.option.arg };
}

/** Every prefix of every long name in the table, and `--a` … `--z` (a name the table lacks starts with one). */
function prefixes(table: OptionTable): string[] {
  const out = new Set<string>();
  for (const name of Object.keys(table.long))
    for (let k = 1; k <= name.length; k++) out.add(name.slice(0, k));
  for (let c = 97; c <= 122; c++) out.add(String.fromCharCode(c));
  return [...out];
}

/** The full name of the option an id belongs to, as glibc names it in its messages. */
function namesOf(table: OptionTable, id: string): string[] {
  return Object.entries(table.long)
    .filter(([, o]) => o.id === id)
    .map(([n]) => n);
}

/**
 * glibc getopt (sed, sort): its messages name the option it resolved a prefix to. For each
 * prefix: `prog --p` (required values: "option '--name' requires an argument") and
 * `prog --p=x` (no value allowed: "option '--name' doesn't allow an argument").
 */
function checkGlibcLong(program: string, table: OptionTable, operand: string[]): string[] {
  const list = prefixes(table);
  const bare = runAll(
    `${program}-long-bare`,
    list.map((p) => [program, ...operand, `--${p}`]),
  );
  const withValue = runAll(
    `${program}-long-eq`,
    list.map((p) => [program, `--${p}=x`, ...operand]),
  );
  const failures: string[] = [];
  list.forEach((p, i) => {
    const ours = longClass(table, p);
    const a = (bare[i] as Ran).stderr;
    const b = (withValue[i] as Ran).stderr;
    const say = (what: string) =>
      failures.push(`${program} --${p}: reloop reads ${JSON.stringify(ours)}, ${what}`);
    if (ours === 'ambiguous') {
      if (!/is ambiguous/.test(a)) say(`${program} said: ${a.split('\n')[0]}`);
    } else if (ours === 'unknown') {
      if (!/unrecognized option/.test(a)) say(`${program} said: ${a.split('\n')[0]}`);
    } else {
      const names = namesOf(table, ours.id).map((n) => `'--${n}'`);
      const named = (text: string, msg: string) => names.some((n) => text.includes(`option ${n} ${msg}`));
      if (/is ambiguous|unrecognized option/.test(a)) say(`${program} refused it: ${a.split('\n')[0]}`);
      else if (ours.arg === 'required' && !named(a, 'requires an argument'))
        say(`${program} said: ${a.split('\n')[0]}`);
      else if (ours.arg === 'none' && !named(b, "doesn't allow an argument"))
        say(`${program} said: ${b.split('\n')[0]}`);
      else if (ours.arg === 'optional' && /doesn't allow|requires an argument|unrecognized|ambiguous/.test(b))
        say(`${program} said: ${b.split('\n')[0]}`);
    }
  });
  return failures;
}

const LETTERS = [...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'];

/** glibc getopt's short options: `prog -X` last (unknown, or needs a value), `prog -X@` (@ a value or a letter). */
function checkGlibcShort(program: string, table: OptionTable, operand: string[]): string[] {
  const alone = runAll(
    `${program}-short`,
    LETTERS.map((c) => [program, ...operand, `-${c}`]),
  );
  const glued = runAll(
    `${program}-short-glued`,
    LETTERS.map((c) => [program, `-${c}@`, ...operand]),
  );
  const failures: string[] = [];
  LETTERS.forEach((c, i) => {
    const ours = Object.hasOwn(table.short, c) ? table.short[c] : 'unknown';
    const a = (alone[i] as Ran).stderr;
    const b = (glued[i] as Ran).stderr;
    const real = new RegExp(`invalid option -- '${c}'`).test(a)
      ? 'unknown'
      : new RegExp(`requires an argument -- '${c}'`).test(a)
        ? 'required'
        : /invalid option -- '@'/.test(b)
          ? 'none'
          : 'optional';
    if (ours !== real) failures.push(`${program} -${c}: reloop reads ${ours}, ${program} ${real}`);
  });
  return failures;
}

describe('option tables against the real programs', () => {
  it('GNU sed: every letter, every long name and prefix', { timeout: 120_000 }, () => {
    const failures = [
      ...checkGlibcShort('sed', SED_OPTIONS, ['p', '/dev/null']),
      ...checkGlibcLong('sed', SED_OPTIONS, ['-e', 'p', '/dev/null']),
    ];
    expect(failures).toEqual([]);
  });

  it('GNU sort: every letter, every long name and prefix', { timeout: 120_000 }, () => {
    const failures = [
      ...checkGlibcShort('sort', SORT_OPTIONS, ['/dev/null']),
      ...checkGlibcLong('sort', SORT_OPTIONS, ['/dev/null']),
    ];
    expect(failures).toEqual([]);
  });

  it.skipIf(!has('gawk'))('gawk: every letter and every long prefix', { timeout: 120_000 }, () => {
    // gawk's own getopt says only "Usage" for an unknown or ambiguous option, and names the
    // short letter of the one it resolved: `--posix=x` says "requires an argument -- P".
    const list = prefixes(GAWK_OPTIONS);
    const eq = runAll(
      'gawk-long',
      list.map((p) => ['gawk', `--${p}=x`, 'BEGIN { print "OK" }']),
    );
    const bare = runAll(
      'gawk-long-bare',
      list.map((p) => ['gawk', `--${p}`]),
    );
    const failures: string[] = [];
    list.forEach((p, i) => {
      const ours = longClass(GAWK_OPTIONS, p);
      const a = eq[i] as Ran;
      const b = bare[i] as Ran;
      const refused = (r: Ran) => r.stderr.startsWith('Usage:') && r.stdout === '';
      const say = (what: string) =>
        failures.push(`gawk --${p}: reloop reads ${JSON.stringify(ours)}, ${what}`);
      if (typeof ours === 'string') {
        if (!refused(a)) say(`gawk said ${JSON.stringify((a.stderr || a.stdout).slice(0, 80))}`);
        return;
      }
      const letter = ours.id.startsWith('--') ? undefined : ours.id.slice(1);
      if (ours.arg === 'none' && letter && !a.stderr.includes(`requires an argument -- ${letter}`))
        say(`gawk said ${JSON.stringify(a.stderr.slice(0, 80))}`);
      if (ours.arg === 'required' && letter && !b.stderr.includes(`requires an argument -- ${letter}`))
        say(`gawk said ${JSON.stringify(b.stderr.slice(0, 80))}`);
      if (ours.arg === 'optional' && refused(a)) say('gawk refused it');
    });
    const alone = runAll(
      'gawk-short',
      LETTERS.map((c) => ['gawk', `-${c}`]),
    );
    LETTERS.forEach((c, i) => {
      const ours = Object.hasOwn(GAWK_OPTIONS.short, c) ? GAWK_OPTIONS.short[c] : 'unknown';
      const needs = (alone[i] as Ran).stderr.includes(`requires an argument -- ${c}`);
      if ((ours === 'required') !== needs)
        failures.push(`gawk -${c}: reloop reads ${ours}, gawk ${needs ? 'required' : 'not required'}`);
    });
    expect(failures).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// sed scripts

const SED_TOKENS = [
  'p',
  'p',
  'e touch PWN_E',
  'e',
  'w PWN_W',
  'W PWN_W2',
  's/a/b/',
  's/a/b/w PWN_SW',
  's/a/touch PWN_SE/e',
  's/[/]/x/',
  's|a|b|g',
  's/a/b/ w PWN_SWB',
  'y/ab/ba/',
  ':a',
  'ba',
  'b',
  't',
  'ta',
  'T x',
  'v',
  'v 4.2',
  '{',
  '}',
  ';',
  ';',
  '\n',
  ' ',
  '\t',
  '#c',
  '1',
  '$',
  '/a/',
  '/[/]/',
  '\\%a%',
  ',',
  '!',
  'a foo',
  'a\\',
  'i\\\n',
  'c x',
  'r /dev/null',
  'R /dev/null',
  'q',
  'l 5',
  '=',
  'N',
  'D',
  'z',
  'F',
  'x',
  '[',
  ']',
  '/',
  '\\',
  'w',
  's',
  'I',
  'M',
  'g',
  '0~2',
  '+1',
  '~2',
  '\\n',
];

const CORPUS = [
  ':a;e touch PWN_1',
  'v;e touch PWN_2',
  'ta;e touch PWN_3\n:a',
  '1e touch PWN_4',
  '1w PWN_5',
  'b x e touch PWN_6\n:x',
  't x e touch PWN_7\n:x',
  's/[/]/x/w PWN_8',
  '/[/]/w PWN_9',
  's/a/b/ e',
  'y/a/b/;e touch PWN_10',
  '{:a;e touch PWN_11\n}',
  // The text of a\ goes on over the newline: an `e` there is text.
  'a\\\ne touch NOT_RUN',
  '$!{N};P;D',
  ':a;N;$!ba;s/\\n/ /g',
  's/\\(a\\)/[\\1]/g',
  '/^#/d;s|/|_|g',
];

function randomScripts(n: number): string[] {
  const rnd = seeded(20250118);
  const out = [...CORPUS];
  while (out.length < n) {
    let s = '';
    const k = 1 + Math.floor(rnd() * 8);
    for (let j = 0; j < k; j++) s += SED_TOKENS[Math.floor(rnd() * SED_TOKENS.length)];
    out.push(s);
  }
  return out;
}

describe('the sed script reader against GNU sed', () => {
  it(
    'a script it finds no e or w in runs nothing and writes nothing, in --posix mode too; --sandbox agrees',
    { timeout: 300_000 },
    () => {
      const scripts = randomScripts(1500);
      const readings = scripts.map((s) => readSedScript(s));
      const safe = scripts.filter((_, i) => readings[i]?.risk === undefined);
      // Enough of the random scripts must be read as harmless for this to test anything.
      expect(safe.length).toBeGreaterThan(300);
      const plain = runAll(
        'sed-scripts',
        safe.map((s) => ['sed', '-n', '--', s, 'input']),
      );
      const posix = runAll(
        'sed-scripts-posix',
        safe.map((s) => ['sed', '--posix', '-n', '--', s, 'input']),
      );
      const boxed = runAll(
        'sed-scripts-sandbox',
        safe.map((s) => ['sed', '--sandbox', '-n', '--', s, 'input']),
      );
      const failures: string[] = [];
      safe.forEach((s, i) => {
        for (const [mode, r] of [
          ['', plain[i]],
          ['--posix ', posix[i]],
        ] as const) {
          if (r && (r.made.length || !r.inputKept))
            failures.push(
              `sed ${mode}${JSON.stringify(s)}: reloop sees no e/w, sed made ${r.made.join(', ')}`,
            );
        }
        const reads = readSedScript(s).reads;
        if (!reads && /disabled in sandbox mode/.test(boxed[i]?.stderr ?? ''))
          failures.push(`sed ${JSON.stringify(s)}: reloop sees no e/r/w, sed --sandbox does`);
      });
      expect(failures.slice(0, 10)).toEqual([]);
      // The corpus's attacks are all seen.
      for (const s of CORPUS.filter((c) => c.includes('PWN'))) expect(readSedScript(s).risk, s).toBeDefined();
    },
  );
});

// ---------------------------------------------------------------------------------------------
// Argument lists

function randomArgvs(program: string, tokens: readonly string[], n: number, seed: number): string[][] {
  const rnd = seeded(seed);
  const out: string[][] = [];
  while (out.length < n) {
    const argv = [program];
    const k = 1 + Math.floor(rnd() * 6);
    for (let j = 0; j < k; j++) argv.push(tokens[Math.floor(rnd() * tokens.length)] as string);
    out.push(argv);
  }
  return out;
}

/** Runs what the reader allows; none of it may make a file or change `input`. */
function allowedRunsHarmless(name: string, argvs: readonly string[][], minAllowed: number): void {
  const allowed = argvs.filter((a) => verdict(a) === undefined);
  expect(allowed.length, `${name}: allowed`).toBeGreaterThan(minAllowed);
  expect(argvs.length - allowed.length, `${name}: asked`).toBeGreaterThan(minAllowed);
  const ran = runAll(name, allowed);
  const failures: string[] = [];
  allowed.forEach((argv, i) => {
    const r = ran[i] as Ran;
    if (r.made.length || !r.inputKept)
      failures.push(
        `${JSON.stringify(argv)}: allowed, and it made ${r.made.join(', ') || 'a change to input'}`,
      );
  });
  expect(failures.slice(0, 10)).toEqual([]);
}

const SED_ARGS = [
  '-n',
  '-e',
  '--expression',
  '--expression=p',
  '--exp=1e touch PWN_X',
  '-l',
  '5',
  '--line',
  '--line-length=5',
  '-s',
  '--sandbox',
  '--sa',
  '-i',
  '--in-place',
  '--',
  '-E',
  '-nl',
  '-ne',
  '--posix',
  '-z',
  '--debug',
  'p',
  '1e touch PWN_E',
  'w PWN_W',
  ':a;e touch PWN_L',
  'input',
  'input',
  '-f',
  '-',
];

const AWK_ARGS = [
  '-F',
  '-S',
  '--sandbox',
  '--sa',
  '-v',
  'x=1',
  '--',
  '-f',
  '-W',
  'sandbox',
  '-e',
  '--source',
  '--sou=BEGIN{system("touch PWN_SOU")}',
  '-Fx',
  '-vx=1',
  '--field-separator',
  '--fie=:',
  '--assign',
  '-b',
  '-P',
  'BEGIN{system("touch PWN_SYS")}',
  'BEGIN{print 1 > "PWN_GT"}',
  '{print}',
  'BEGIN{print 1}',
  'input',
  'input',
];

const SORT_ARGS = [
  '-o',
  '--o',
  '--ou=PWN_O1',
  '--output=PWN_O2',
  '-oPWN_O3',
  'PWN_O4',
  '-T',
  '.',
  '--',
  '-k',
  '1',
  '-t',
  ',',
  '-y',
  '-y0',
  '-r',
  '-u',
  '--compress-program=touch',
  '--comp=touch',
  '-S',
  '10M',
  '--debug',
  '-c',
  '--check',
  '--files0-from',
  'input',
  'input',
  '-',
];

describe('argument lists against the real programs: what is allowed is harmless', () => {
  it('sed', { timeout: 300_000 }, () => {
    allowedRunsHarmless('sed-argv', randomArgvs('sed', SED_ARGS, 1000, 7), 150);
  });

  it.skipIf(!has('gawk'))('gawk', { timeout: 300_000 }, () => {
    allowedRunsHarmless('gawk-argv', randomArgvs('gawk', AWK_ARGS, 1000, 11), 150);
  });

  it.skipIf(!has('mawk'))('mawk (and so awk, whichever it is)', { timeout: 300_000 }, () => {
    allowedRunsHarmless('mawk-argv', randomArgvs('mawk', AWK_ARGS, 1000, 13), 150);
  });

  it('sort', { timeout: 300_000 }, () => {
    allowedRunsHarmless('sort-argv', randomArgvs('sort', SORT_ARGS, 1000, 17), 150);
  });
});
