import { baseName } from './bashMatch.ts';
import { sedScriptRisk } from './sedScript.ts';

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
  check(words: readonly string[]): string | undefined;
  trustsBareRule: boolean;
}

/** Whether `word` is a (possibly abbreviated, `=value`-suffixed) spelling of one of `names`. */
function longOption(word: string, names: readonly string[], minChars = 4): string | undefined {
  if (!word.startsWith('--') || word === '--') return undefined;
  const eq = word.indexOf('=');
  const opt = eq < 0 ? word : word.slice(0, eq);
  // getopt_long and git's parse-options accept any unambiguous prefix: `--to-c` is `--to-command`.
  return names.find((n) => n === opt || (opt.length >= minChars && n.startsWith(opt)));
}

/** A short-option cluster (`-xvf`, `-Ocmd`) containing one of `letters`; undefined if none. */
function shortHas(word: string, letters: string): string | undefined {
  if (!word.startsWith('-') || word.startsWith('--') || word.length < 2) return undefined;
  for (const c of word.slice(1)) if (letters.includes(c)) return c;
  return undefined;
}

/** The words before a bare `--` (after it, arguments are operands, not options). */
function optionWords(words: readonly string[]): readonly string[] {
  const end = words.indexOf('--', 1);
  return end < 0 ? words.slice(1) : words.slice(1, end);
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
];
/** Short options that do the same, per subcommand. */
const GIT_RISKY_SHORT: Record<string, string> = {
  grep: 'O',
  clone: 'uc',
  'ls-remote': 'u',
  rebase: 'x',
  difftool: 'x',
  'format-patch': 'o',
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

function tar(words: readonly string[]): string | undefined {
  const opts = optionWords(words);
  for (const w of opts) {
    const long = longOption(w, TAR_RUNS, 5);
    if (long) return `tar ${w}: ${long} runs a command`;
    if (shortHas(w, 'IF')) return `tar ${w}: -I and -F run a command`;
  }
  // Old-style first argument: `tar xIf cmd a.tar`.
  const first = opts[0];
  if (first !== undefined && !first.startsWith('-') && /[IF]/.test(first) && /^[A-Za-z]+$/.test(first)) {
    return `tar ${first}: I and F run a command`;
  }
  return undefined;
}

function rsync(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    const long = longOption(w, ['--rsh', '--rsync-path']);
    if (long || shortHas(w, 'e')) return `rsync ${w}: it names the program rsync runs`;
  }
  return undefined;
}

function sort(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    const long = longOption(w, ['--compress-program', '--output']);
    if (long || shortHas(w, 'o')) return `sort ${w}: it runs a program or writes a file`;
  }
  return undefined;
}

function rg(words: readonly string[]): string | undefined {
  const w = optionWords(words).find((x) => x === '--pre' || x.startsWith('--pre='));
  return w ? `rg ${w} runs a program on every file searched` : undefined;
}

/** GNU sed commands that run or write: `e`, `w`, `W`, and the `e`/`w` flags of `s`. */
function sed(words: readonly string[]): string | undefined {
  const opts = optionWords(words);
  const scripts: string[] = [];
  let sawScriptOption = false;
  let firstOperand: string | undefined;
  for (let i = 0; i < opts.length; i++) {
    const w = opts[i] as string;
    if (!w.startsWith('-') || w === '-') {
      firstOperand ??= w;
      continue;
    }
    if (longOption(w, ['--in-place'], 3) || shortHas(w, 'i')) return `sed ${w} changes files in place`;
    if (longOption(w, ['--file'], 3) || shortHas(w, 'f')) return `sed ${w} runs a script from a file`;
    const expr = longOption(w, ['--expression'], 3);
    if (expr) {
      sawScriptOption = true;
      const eq = w.indexOf('=');
      scripts.push(eq < 0 ? (opts[++i] ?? '') : w.slice(eq + 1));
      continue;
    }
    if (shortHas(w, 'e')) {
      sawScriptOption = true;
      const at = w.indexOf('e');
      scripts.push(at === w.length - 1 ? (opts[++i] ?? '') : w.slice(at + 1));
      continue;
    }
    if (w === '-l' || w === '--line-length') i++;
  }
  if (!sawScriptOption && firstOperand !== undefined) scripts.push(firstOperand);
  if (opts.includes('--sandbox')) return undefined;
  for (const s of scripts) {
    const why = sedScriptRisk(s);
    if (why) return `sed script ${JSON.stringify(s.length > 40 ? `${s.slice(0, 40)}…` : s)}: ${why}`;
  }
  return undefined;
}

const AWK_SAFE_WITH_VALUE = new Set(['-F', '-v', '--field-separator', '--assign']);

/** awk programs may run commands (`system()`, `| getline`, `print | "cmd"`) or write files (`>`). */
function awk(words: readonly string[]): string | undefined {
  const opts = words.slice(1);
  if (opts.includes('--sandbox') || opts.includes('-S')) return undefined;
  for (let i = 0; i < opts.length; i++) {
    const w = opts[i] as string;
    if (w === '--') {
      const prog = opts[i + 1];
      return prog === undefined ? undefined : awkProgramRisk(prog);
    }
    if (!w.startsWith('-') || w === '-') return awkProgramRisk(w);
    if (AWK_SAFE_WITH_VALUE.has(w)) {
      i++;
      continue;
    }
    if (/^-[Fv]./.test(w) || /^--(field-separator|assign)=/.test(w)) continue;
    return `awk ${w}: an option reloop does not check (it may load a file, write one or run code)`;
  }
  return undefined;
}

function awkProgramRisk(prog: string): string | undefined {
  if (/system|[|>@]/.test(prog))
    return 'the awk program may run a command or write a file (system, |, >, @load)';
  return undefined;
}

function make(words: readonly string[]): string | undefined {
  for (const w of words.slice(1)) {
    if (/^[A-Za-z_][A-Za-z0-9_.-]*\s*[:+?!]?=/.test(w))
      return `make ${w}: a variable set here may run anything`;
    const long = longOption(w, ['--eval', '--file', '--makefile', '--directory', '--include-dir'], 4);
    if (long || shortHas(w, 'fCEI')) return `make ${w}: it chooses which makefile text runs`;
  }
  return undefined;
}

function go(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    const m = /^--?([A-Za-z]+)(?:=|$)/.exec(w);
    if (
      m &&
      ['exec', 'toolexec', 'overlay', 'C', 'ldflags', 'gccgoflags', 'compiler'].includes(m[1] as string)
    ) {
      return `go ${w}: it runs another program or changes what is built`;
    }
  }
  return undefined;
}

function cargo(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    if (longOption(w, ['--config'], 5) || w.startsWith('-Z'))
      return `cargo ${w}: it may set the programs cargo runs`;
  }
  return undefined;
}

function man(words: readonly string[]): string | undefined {
  for (const w of optionWords(words)) {
    if (longOption(w, ['--pager', '--html'], 4) || shortHas(w, 'PH'))
      return `man ${w}: it names the program man runs`;
  }
  return undefined;
}

function zip(words: readonly string[]): string | undefined {
  const w = optionWords(words).find((x) => x === '-TT' || longOption(x, ['--unzip-command'], 5));
  return w ? `zip ${w} runs a command` : undefined;
}

const PROGRAMS: Record<string, ProgramSpec> = {
  npm: { check: npm, trustsBareRule: true },
  git: { check: git, trustsBareRule: true },
  go: { check: go, trustsBareRule: true },
  cargo: { check: cargo, trustsBareRule: true },
  make: { check: make, trustsBareRule: true },
  find: { check: find, trustsBareRule: false },
  tar: { check: tar, trustsBareRule: false },
  rsync: { check: rsync, trustsBareRule: false },
  sort: { check: sort, trustsBareRule: false },
  rg: { check: rg, trustsBareRule: false },
  sed: { check: sed, trustsBareRule: false },
  awk: { check: awk, trustsBareRule: false },
  gawk: { check: awk, trustsBareRule: false },
  mawk: { check: awk, trustsBareRule: false },
  nawk: { check: awk, trustsBareRule: false },
  man: { check: man, trustsBareRule: false },
  zip: { check: zip, trustsBareRule: false },
};

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
  const dashdash = words.indexOf('--', 1);
  for (let i = 1; i < words.length; i++) {
    if (dashdash > 0 && i > dashdash) break;
    if (glob[i] && /^[*?[-]/.test(words[i] as string)) {
      return risk(`${name} ${words[i]}: bash may expand it to any file name, including an option`);
    }
  }
  const why = spec.check(words);
  return why === undefined ? undefined : risk(why);
}
