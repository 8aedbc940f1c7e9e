import { baseName } from './bashMatch.ts';
import { type OptionTable, readArgs } from './getopt.ts';
import {
  ANY_AWK_OPTIONS,
  awk,
  type Check,
  GAWK_OPTIONS,
  gawk,
  SED_OPTIONS,
  SORT_OPTIONS,
  sed,
  sort,
} from './textPrograms.ts';

/**
 * Arguments that turn an allowed program into something else. An allow rule names a program
 * (`Bash(find:*)`, `Bash(tar:*)`) or a program and a subcommand (`Bash(npm test:*)`,
 * `Bash(git grep:*)`); a prefix rule accepts any further arguments. Some programs take options
 * that make them run a command of the caller's choosing (`tar --checkpoint-action=exec=…`,
 * `git grep -O…`, `rg --pre=…`, `npm test --node-options=--import=data:…`, `go test -exec …`),
 * or change files a reader of the rule would not expect (`find -delete`, `sed -i`,
 * `sort -o FILE`, `git log --output=FILE`). Such a command is not vouched for by the rule: it is
 * asked. A rule that names only the program itself (`Bash(git:*)`, `Bash(npm:*)`) trusts every
 * use of a program that is a command runner by nature (`trustsBareRule`); a rule naming a text
 * tool (`Bash(find:*)`, `Bash(sed:*)`) does not vouch for the options that make it execute or
 * write.
 *
 * Options are read as the program reads them. sed, awk and sort have complete option tables
 * (textPrograms.ts, read by getopt.ts: values consumed, abbreviations resolved, unknown options
 * asked). For the others a risky long option is matched by any prefix of its name (getopt takes
 * `--rs` for `--rsh-command` when nothing else starts so), every letter of a short cluster counts,
 * and a `--` ends the options only where it cannot be an option's value (`dashDashEnd`).
 *
 * The table is a guard for the programs people allow, not a complete list: a prefix rule for a
 * program not listed here vouches for all its arguments (docs/security.md).
 */

export interface ArgumentRisk {
  why: string;
  /** A rule naming only the program (`Bash(git:*)`) still allows it. */
  trustsBareRule: boolean;
}

interface ProgramSpec {
  /** Returns why the arguments are risky, or undefined. `words[0]` is the program. */
  check: Check;
  trustsBareRule: boolean;
  /** Its complete option table (textPrograms.ts): options end where getopt says. */
  options?: OptionTable;
  /** Whether a `--` can end its options at all (find's expressions and tar's old style are not getopt). */
  noDashDash?: (words: readonly string[]) => boolean;
}

/**
 * Whether `word` is a long option getopt_long (or git's parse-options) could read as one of
 * `names`: the name itself, or any prefix of it — a prefix of one name is that option, a prefix of
 * several is refused by the program. `safe` lists real options that are themselves a prefix of a
 * risky name (tar's `--checkpoint`), which getopt takes exactly.
 */
function longOption(
  word: string,
  names: readonly string[],
  safe: readonly string[] = [],
): string | undefined {
  if (!word.startsWith('--') || word === '--') return undefined;
  const eq = word.indexOf('=');
  const opt = eq < 0 ? word : word.slice(0, eq);
  if (safe.includes(opt)) return undefined;
  return names.find((n) => n.startsWith(opt));
}

/** A short-option cluster (`-xvf`, `-Ocmd`) containing one of `letters`; undefined if none. */
function shortHas(word: string, letters: string): string | undefined {
  if (!word.startsWith('-') || word.startsWith('--') || word.length < 2) return undefined;
  for (const c of word.slice(1)) if (letters.includes(c)) return c;
  return undefined;
}

/**
 * Index of the first `--` that surely ends the options (words.length if none). A `--` right
 * after an option word may be that option's value (`git grep -e -- --open-files-in-pager=cmd`,
 * `sort -T -- -o f`): without the program's full option table it ends nothing, and the words
 * after it are checked too. After an operand, a value or `--name=value` it is the end.
 */
function dashDashEnd(words: readonly string[]): number {
  for (let k = words.indexOf('--', 1); k > 0; k = words.indexOf('--', k + 1)) {
    const prev = words[k - 1] as string;
    if (k === 1 || prev === '-' || !prev.startsWith('-') || (prev.startsWith('--') && prev.includes('=')))
      return k;
  }
  return words.length;
}

/** The words before a `--` that surely ends the options (after it, arguments are operands). */
function optionWords(words: readonly string[]): readonly string[] {
  return words.slice(1, dashDashEnd(words));
}

const NPM_FLAGS = new Set([
  '-s',
  '--silent',
  '-q',
  '--quiet',
  '-d',
  '-dd',
  '-ddd',
  '--verbose',
  '--if-present',
  '--ignore-scripts',
  '--json',
  '--parseable',
  '-p',
  '--long',
  '-l',
  '--no-color',
  '--no-progress',
  '--no-audit',
  '--no-fund',
  '--foreground-scripts',
  '-ws',
  '--workspaces',
  '--include-workspace-root',
  '--dry-run',
  '--save',
  '-S',
  '--save-dev',
  '-D',
  '--save-optional',
  '-O',
  '--save-peer',
  '--save-exact',
  '-E',
  '--save-prod',
  '-P',
  '--no-save',
  '--legacy-peer-deps',
  '--strict-peer-deps',
  '--prefer-offline',
  '--prefer-online',
  '--offline',
  '--force',
  '-f',
  '--no-package-lock',
  '--package-lock-only',
]);
const NPM_WITH_VALUE = new Set(['--loglevel', '--workspace', '-w', '--omit', '--include', '--color']);

/**
 * npm reads every `--name=value` before `--` as configuration, abbreviated or not
 * (`--node-opti=--import=data:…` is `node-options`, which reaches every script's node), so only
 * the options known to be harmless pass.
 */
function npm(words: readonly string[]): string | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '--') return undefined;
    if (!w.startsWith('-') || NPM_FLAGS.has(w)) continue;
    const eq = w.indexOf('=');
    if (NPM_WITH_VALUE.has(eq < 0 ? w : w.slice(0, eq))) {
      if (eq < 0) i++;
      continue;
    }
    return `npm ${w}: npm reads options as configuration, and some make it run other programs`;
  }
  return undefined;
}

const GIT_SAFE_GLOBAL = new Set([
  '--no-pager',
  '-P',
  '--paginate',
  '-p',
  '--no-optional-locks',
  '--literal-pathspecs',
  '--no-replace-objects',
  '--version',
  '--help',
]);
/** Long options of any git subcommand that run a command or write a file named by the caller. */
const GIT_RISKY_LONG = [
  '--output',
  '--output-directory',
  '--open-files-in-pager',
  '--upload-pack',
  '--receive-pack',
  '--exec',
  '--extcmd',
  '--config',
  '--template',
  // send-email runs these; instaweb and web--browse start the programs named.
  '--to-cmd',
  '--cc-cmd',
  '--header-cmd',
  '--sendmail-cmd',
  '--smtp-server',
  '--httpd',
  '--browser',
  // apply writes outside the working tree with it.
  '--unsafe-paths',
];
/** Short options that do the same, per subcommand. */
const GIT_RISKY_SHORT: Record<string, string> = {
  grep: 'O',
  clone: 'uc',
  'ls-remote': 'u',
  rebase: 'x',
  difftool: 'x',
  'format-patch': 'o',
  archive: 'o',
  instaweb: 'db',
};
/** Subcommands that run a command given as an argument. */
const GIT_RUNNERS: Record<string, string> = {
  submodule: 'foreach',
  bisect: 'run',
};

function git(words: readonly string[]): string | undefined {
  let i = 1;
  for (; i < words.length; i++) {
    const w = words[i] as string;
    if (!w.startsWith('-')) break;
    if (!GIT_SAFE_GLOBAL.has(w)) {
      return `git ${w}: a global option that changes the configuration, repository or programs git uses`;
    }
  }
  const sub = words[i];
  if (sub === undefined) return undefined;
  if (sub === 'filter-branch' || sub === 'filter-repo') return `git ${sub} runs the filters it is given`;
  const rest = optionWords(words.slice(i));
  const runner = GIT_RUNNERS[sub];
  if (runner && rest.includes(runner)) return `git ${sub} ${runner} runs the command it is given`;
  for (const w of rest) {
    const long = longOption(w, GIT_RISKY_LONG);
    if (long) return `git ${sub} ${w}: ${long} runs a command or writes a file it is given`;
    const short = GIT_RISKY_SHORT[sub] && shortHas(w, GIT_RISKY_SHORT[sub]);
    if (short) return `git ${sub} ${w}: -${short} runs a command or writes a file it is given`;
  }
  return undefined;
}

const FIND_CHANGES = new Set(['-delete', '-fprint', '-fprint0', '-fprintf', '-fls']);

/** find's primaries are matched exactly, anywhere in its expression (a value like `-name -delete` is asked too). */
function find(words: readonly string[]): string | undefined {
  const w = words.find((x) => FIND_CHANGES.has(x));
  return w ? `find ${w} deletes or writes files` : undefined;
}

const TAR_RUNS = [
  '--to-command',
  '--use-compress-program',
  '--checkpoint-action',
  '--info-script',
  '--new-volume-script',
  '--rsh-command',
  '--rmt-command',
];

/** Old-style first argument (`tar xIf cmd a.tar`): its letters take the following words as values. */
function tarOldStyle(words: readonly string[]): boolean {
  const first = words[1];
  return first !== undefined && !first.startsWith('-') && /^[A-Za-z]+$/.test(first);
}

function tar(words: readonly string[]): string | undefined {
  // In the old style a `--` may be the value of one of the first word's letters (`tar cbf 20 --`).
  const opts = tarOldStyle(words) ? words.slice(1) : optionWords(words);
  for (const w of opts) {
    // `--checkpoint` is an option of its own, not an abbreviation of --checkpoint-action.
    const long = longOption(w, TAR_RUNS, ['--checkpoint']);
    if (long) return `tar ${w}: ${long} runs a command`;
    if (shortHas(w, 'IF')) return `tar ${w}: -I and -F run a command`;
  }
  const first = opts[0];
  if (first !== undefined && tarOldStyle(words) && /[IF]/.test(first)) {
    return `tar ${first}: I and F run a command`;
  }
  return undefined;
}

function rsync(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    const long = longOption(w, ['--rsh', '--rsync-path', '--remote-option', '--daemon', '--config']);
    if (long || shortHas(w, 'eM')) return `rsync ${w}: it names a program rsync runs, or its configuration`;
  }
  return undefined;
}

function rg(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    const long = longOption(w, ['--pre', '--hostname-bin']);
    if (long) return `rg ${w}: ${long} runs a program`;
  }
  return undefined;
}

function make(words: readonly string[]): string | undefined {
  for (const w of words.slice(1)) {
    // make reads any operand with `=` as a variable definition, after `--` too (` CC=cmd` included).
    if (!w.startsWith('-') && w.includes('=')) return `make ${w}: a variable set here may run anything`;
    const long = longOption(w, ['--eval', '--file', '--makefile', '--directory', '--include-dir']);
    if (long || shortHas(w, 'fCEI')) return `make ${w}: it chooses which makefile text runs`;
  }
  return undefined;
}

const GO_RISKY = ['exec', 'toolexec', 'vettool', 'overlay', 'C', 'ldflags', 'gccgoflags', 'compiler'];

/** Go's flag package: `-name`, `--name`, `=value` or the next word; no abbreviations, no clusters. */
function go(words: readonly string[]): string | undefined {
  for (const w of words.slice(1)) {
    const m = /^--?([A-Za-z]+)(?:=|$)/.exec(w);
    if (m && GO_RISKY.includes(m[1] as string))
      return `go ${w}: it runs another program or changes what is built`;
  }
  return undefined;
}

function cargo(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    if (longOption(w, ['--config']) || w.startsWith('-Z'))
      return `cargo ${w}: it may set the programs cargo runs`;
  }
  return undefined;
}

function man(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    // man-db's configuration file may DEFINE the pager and the formatters.
    if (longOption(w, ['--pager', '--html', '--config-file']) || shortHas(w, 'PHC'))
      return `man ${w}: it names the program man runs, or its configuration`;
  }
  return undefined;
}

function zip(words: readonly string[]): string | undefined {
  const w = optionWords(words).find(
    (x) =>
      (!x.startsWith('--') && x.startsWith('-') && x.includes('TT')) || longOption(x, ['--unzip-command']),
  );
  return w ? `zip ${w} runs a command` : undefined;
}

const PROGRAMS: Record<string, ProgramSpec> = {
  npm: { check: npm, trustsBareRule: true },
  git: { check: git, trustsBareRule: true },
  go: { check: go, trustsBareRule: true, noDashDash: () => true },
  cargo: { check: cargo, trustsBareRule: true },
  make: { check: make, trustsBareRule: true },
  find: { check: find, trustsBareRule: false, noDashDash: () => true },
  tar: { check: tar, trustsBareRule: false, noDashDash: tarOldStyle },
  rsync: { check: rsync, trustsBareRule: false },
  sort: { check: sort, trustsBareRule: false, options: SORT_OPTIONS },
  rg: { check: rg, trustsBareRule: false },
  sed: { check: sed, trustsBareRule: false, options: SED_OPTIONS },
  awk: { check: awk, trustsBareRule: false, options: ANY_AWK_OPTIONS },
  gawk: { check: gawk, trustsBareRule: false, options: GAWK_OPTIONS },
  mawk: { check: awk, trustsBareRule: false, options: ANY_AWK_OPTIONS },
  nawk: { check: awk, trustsBareRule: false, options: ANY_AWK_OPTIONS },
  man: { check: man, trustsBareRule: false },
  zip: { check: zip, trustsBareRule: false },
};

/** Where words stop being possible options, for the glob rule: after a `--` that ends them. */
function operandsFrom(words: readonly string[], spec: ProgramSpec): number {
  if (spec.options) {
    const args = readArgs(words, spec.options);
    return 'error' in args ? words.length : args.operandsFrom;
  }
  if (spec.noDashDash?.(words)) return words.length;
  const end = dashDashEnd(words);
  return end < words.length ? end + 1 : end;
}

/**
 * Why this command's arguments may make its program run or change something its rule does not
 * name; undefined when nothing is known against them. `open`: more arguments are appended at run
 * time (xargs). A word bash expands (`*`, `?…`) may become any option (`--pre=rm` is a file name
 * the model could create), so for a listed program it is risky unless it follows `--`.
 */
export function argumentRisk(
  words: readonly string[],
  glob: readonly boolean[],
  open: boolean,
): ArgumentRisk | undefined {
  const name = baseName(words[0] as string);
  const spec = PROGRAMS[name];
  if (!spec) return undefined;
  const risk = (why: string): ArgumentRisk => ({ why, trustsBareRule: spec.trustsBareRule });
  if (open) return risk(`${name} gets more arguments from its input, which may be options`);
  const end = operandsFrom(words, spec);
  for (let i = 1; i < end; i++) {
    if (glob[i] && /^[*?[-]/.test(words[i] as string)) {
      return risk(`${name} ${words[i]}: bash may expand it to any file name, including an option`);
    }
  }
  const why = spec.check(words, glob);
  return why === undefined ? undefined : risk(why);
}
