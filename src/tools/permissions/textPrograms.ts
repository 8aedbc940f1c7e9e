import { longTable, type OptionTable, type ReadArgs, readArgs, shortTable } from './getopt.ts';
import { readSedScript } from './sedScript.ts';

/**
 * The text tools whose arguments decide what they run: sed (its script), awk (its program) and
 * sort (`-o`, `--compress-program`). Their options are read with their complete option tables as
 * getopt reads them (getopt.ts): an option's value is never mistaken for an option (`awk -F -S`:
 * `-S` is the field separator), an abbreviation is the option it abbreviates (`sort --o=f`), and
 * an option reloop does not know is asked, since it may take a value and so move the script.
 * test/tools/permissions/programArgs.int.test.ts checks these tables against the real programs.
 */

export type Check = (words: readonly string[], glob: readonly boolean[]) => string | undefined;

/** GNU sed 4.x (sed.c: "bsnrzuEe:f:l:i::V:" and its long options; `-V x` is refused). */
export const SED_OPTIONS: OptionTable = {
  short: shortTable('bsnrzuE', 'eflV', 'i'),
  long: longTable({
    binary: ['none', '-b'],
    debug: 'none',
    expression: ['required', '-e'],
    file: ['required', '-f'],
    'follow-symlinks': 'none',
    help: 'none',
    'in-place': ['optional', '-i'],
    'line-length': ['required', '-l'],
    'null-data': ['none', '-z'],
    posix: 'none',
    quiet: ['none', '-n'],
    'regexp-extended': ['none', '-E'],
    sandbox: 'none',
    separate: ['none', '-s'],
    silent: ['none', '-n'],
    unbuffered: ['none', '-u'],
    version: 'none',
    'zero-terminated': ['none', '-z'],
  }),
  permute: true,
};

const SED_HARMLESS = new Set([
  '-b',
  '-n',
  '-E',
  '-r',
  '-s',
  '-u',
  '-z',
  '-l',
  '--debug',
  '--follow-symlinks',
  '--help',
  '--posix',
  '--version',
  '--sandbox',
]);

function clip(s: string): string {
  return JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s);
}

/** Why the words up to `last` cannot be trusted to stay where they are: a glob may become 0 or many words. */
function globBefore(words: readonly string[], glob: readonly boolean[], last: number): string | undefined {
  for (let i = 1; i <= last; i++) {
    if (glob[i]) return `${words[i]}: bash may expand it to any number of words, moving the script`;
  }
  return undefined;
}

/**
 * Whether `--sandbox` (at `at`) covers every script: sed compiles each `-e` as it reads it, so a
 * `-e` before `--sandbox` is compiled (its `w` files opened) without it; and with POSIXLY_CORRECT
 * set, getopt stops at the first operand, where a later `--sandbox` is a file name.
 */
function sandboxesAll(args: ReadArgs, at: number): boolean {
  const first = args.operands[0];
  if (first !== undefined && first.at < at) return false;
  return args.options.every((o) => o.id !== '-e' || o.at > at);
}

/** GNU sed: `-i` and `-f` are asked; every script (`-e`…, or the first operand) is read by sedScript.ts. */
export const sed: Check = (words, glob) => {
  const args = readArgs(words, SED_OPTIONS);
  if ('error' in args) return `sed ${args.error}`;
  const chunks: string[] = [];
  let last = 0;
  let sandbox = false;
  for (const o of args.options) {
    if (o.id === '-i') return `sed ${o.word} changes files in place`;
    if (o.id === '-f') return `sed ${o.word} runs a script from a file`;
    if (o.id === '-e') {
      chunks.push(o.value as string);
      last = Math.max(last, o.valueAt as number);
    } else if (o.id === '--sandbox') sandbox ||= sandboxesAll(args, o.at);
    else if (!SED_HARMLESS.has(o.id)) return `sed ${o.word}: an option reloop does not check`;
  }
  if (chunks.length === 0) {
    const script = args.operands[0];
    if (script === undefined) return undefined; // sed refuses to run without a script
    chunks.push(script.value);
    last = script.at;
  }
  const moved = globBefore(words, glob, last);
  if (moved) return `sed ${moved}`;
  if (sandbox) return undefined;
  const { risk } = readSedScript(chunks);
  return risk ? `sed script ${clip(chunks.join('\n'))}: ${risk}` : undefined;
};

/**
 * gawk 5 ("+F:f:v:W;bcCd::D::e:E:ghi:l:L::nNo::Op::MPrSstVZ:" and its long options): options end
 * at the first operand, which is the program unless `-e`/`-f` gave one.
 */
export const GAWK_OPTIONS: OptionTable = {
  short: shortTable('bcCghIMnNOPrsStV', 'eEfFilvWZ', 'dDLop'),
  long: longTable({
    assign: ['required', '-v'],
    bignum: ['none', '-M'],
    'characters-as-bytes': ['none', '-b'],
    copyright: ['none', '-C'],
    debug: ['optional', '-D'],
    'dump-variables': ['optional', '-d'],
    exec: ['required', '-E'],
    'field-separator': ['required', '-F'],
    file: ['required', '-f'],
    'gen-pot': ['none', '-g'],
    help: ['none', '-h'],
    include: ['required', '-i'],
    lint: ['optional', '-L'],
    'lint-old': ['none', '-t'],
    load: ['required', '-l'],
    'no-optimize': ['none', '-s'],
    'non-decimal-data': ['none', '-n'],
    nostalgia: 'none',
    optimize: ['none', '-O'],
    posix: ['none', '-P'],
    'pretty-print': ['optional', '-o'],
    profile: ['optional', '-p'],
    're-interval': ['none', '-r'],
    sandbox: ['none', '-S'],
    source: ['required', '-e'],
    trace: ['none', '-I'],
    traditional: ['none', '-c'],
    // An entry of its own (a flag variable, no letter), though -N does the same.
    'use-lc-numeric': 'none',
    version: ['none', '-V'],
  }),
  permute: false,
};

/** gawk options that change nothing outside the process (the rest load, run or write files). */
const GAWK_HARMLESS = new Set([
  '-F',
  '-v',
  '-b',
  '-c',
  '-C',
  '-g',
  '-h',
  '-I',
  '-L',
  '-M',
  '-n',
  '-N',
  '-O',
  '-P',
  '-r',
  '-s',
  '-t',
  '-V',
]);

/**
 * Any awk: mawk, BWK awk (macOS, the BSDs) or busybox may be `awk`; they share `-F fs`, `-v a=b`
 * and `--`, and nothing else safely (BWK awk ignores options it does not know, `--sandbox`
 * included, and runs the program; mawk ignores `-W sandbox`).
 */
export const ANY_AWK_OPTIONS: OptionTable = { short: shortTable('', 'Fv'), long: {}, permute: false };

function awkReader(gawk: boolean): Check {
  return (words, glob) => {
    const name = words[0];
    const args = readArgs(words, gawk ? GAWK_OPTIONS : ANY_AWK_OPTIONS);
    if ('error' in args) return `${name} ${args.error}`;
    const programs: string[] = [];
    let last = 0;
    let sandbox = false;
    for (const o of args.options) {
      if (o.id === '-e') {
        programs.push(o.value as string);
        last = Math.max(last, o.valueAt as number);
      } else if (o.id === '-S') sandbox = true;
      else if (!GAWK_HARMLESS.has(o.id))
        return `${name} ${o.word}: it loads a file, writes one or runs code reloop does not check`;
    }
    let files = args.operands;
    if (programs.length === 0) {
      const program = args.operands[0];
      if (program === undefined) return undefined; // awk refuses to run without a program
      programs.push(program.value);
      last = program.at;
      files = files.slice(1);
    }
    const moved = globBefore(words, glob, last);
    if (moved) return `${name} ${moved}`;
    if (sandbox) return undefined;
    for (const p of programs) {
      const why = awkProgramRisk(p);
      if (why) return `${name} program ${clip(p)}: ${why}`;
    }
    // gawk reads `/inet/tcp/…` operands as network connections.
    const net = files.find((f) => f.value.startsWith('/inet'));
    return net ? `${name} ${net.value}: gawk opens it as a network connection` : undefined;
  };
}

export const gawk = awkReader(true);
export const awk = awkReader(false);

function awkProgramRisk(prog: string): string | undefined {
  if (/system|[|>@]|\/inet/.test(prog))
    return 'the program may run a command, write a file or open a connection (system, |, >, @load, /inet)';
  return undefined;
}

/** GNU coreutils sort ("-bcCdfghik:mMno:rRsS:t:T:uVy:z" and its long options). */
export const SORT_OPTIONS: OptionTable = {
  short: shortTable('bcCdfghimMnrRsuVz', 'koStTy'),
  long: longTable({
    'batch-size': 'required',
    'buffer-size': ['required', '-S'],
    check: 'optional',
    'compress-program': 'required',
    debug: 'none',
    'dictionary-order': ['none', '-d'],
    'field-separator': ['required', '-t'],
    'files0-from': 'required',
    'general-numeric-sort': ['none', '-g'],
    help: 'none',
    'human-numeric-sort': ['none', '-h'],
    'ignore-case': ['none', '-f'],
    'ignore-leading-blanks': ['none', '-b'],
    'ignore-nonprinting': ['none', '-i'],
    key: ['required', '-k'],
    merge: ['none', '-m'],
    'month-sort': ['none', '-M'],
    'numeric-sort': ['none', '-n'],
    output: ['required', '-o'],
    parallel: 'required',
    'random-sort': ['none', '-R'],
    'random-source': 'required',
    reverse: ['none', '-r'],
    sort: 'required',
    stable: ['none', '-s'],
    'temporary-directory': ['required', '-T'],
    unique: ['none', '-u'],
    version: 'none',
    'version-sort': ['none', '-V'],
    'zero-terminated': ['none', '-z'],
  }),
  permute: true,
};

/**
 * `-y` takes a value (ignored, for Solaris), but sort gives a separate value word back to getopt
 * unless it is all digits: `sort -y -o f` writes f. Reads again with such a `-y` taken out.
 */
function sortArgs(words: readonly string[]): ReturnType<typeof readArgs> {
  let w = [...words];
  for (let round = 0; round < words.length; round++) {
    const args = readArgs(w, SORT_OPTIONS);
    if ('error' in args) return args;
    const y = args.options.find((o) => o.id === '-y' && o.valueAt === o.at + 1 && /\D/.test(o.value ?? ''));
    if (!y) return args;
    const rest = (w[y.at] as string).slice(0, -1);
    w = [...w.slice(0, y.at), ...(rest === '-' ? [] : [rest]), ...w.slice(y.at + 1)];
  }
  return { error: '-y: repeated more often than reloop reads' };
}

export const sort: Check = (words) => {
  const args = sortArgs(words);
  if ('error' in args) return `sort ${args.error}`;
  for (const o of args.options) {
    if (o.id === '-o') return `sort ${o.word}: it writes the file it is given`;
    if (o.id === '--compress-program') return `sort ${o.word}: it runs the program it is given`;
  }
  // The obsolete `sort +1 -2` key syntax reads operands as options.
  const plus = args.operands.find((o) => o.value.startsWith('+'));
  return plus ? `sort ${plus.value}: an obsolete key sort may read as an option` : undefined;
};
