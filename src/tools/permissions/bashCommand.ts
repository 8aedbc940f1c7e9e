import path from 'node:path';
import { type ArgumentRisk, argumentRisk } from './programArgs.ts';
import { parseShell, type SimpleCommand } from './shellParse.ts';

/**
 * What a Bash command means to permission rules. A rule names a command by its words
 * (`Bash(npm test:*)`); this module finds every command a string really runs — each simple
 * command of a compound one, and the commands that wrappers run for them (`nice`, `env`,
 * `xargs`, `find -exec`, `bash -c '…'`, `eval`…) — and says when it cannot account for all of
 * them.
 *
 * Allow rules match strictly: the literal command name, every command allowed, nothing opaque,
 * no file written by a redirection, no variable assigned, no shell state changed. Deny rules
 * match generously: the name as spelled any way bash accepts (`/bin/rm`, `"rm"`, `r\m`,
 * `command rm`, `env rm`, `sudo -u x rm`), a glob that could expand to it, any part of a
 * compound command. When deny rules exist and something could hide a command from them, the
 * call is asked, not allowed.
 */

/** One command as rules see it: its words after quote removal; `glob[i]` when word i may expand. */
export interface CommandView {
  words: string[];
  glob: boolean[];
  /** More arguments are appended when it runs (`xargs cmd`, `find -exec cmd {} +`). */
  open?: boolean;
  /** Its arguments may make the program run or change something (programArgs.ts); allow views only. */
  risk?: ArgumentRisk;
}

export interface BashAnalysis {
  /** Commands an allow rule must cover, each of them; empty when `unaccounted` is set. */
  allowViews: CommandView[];
  /** Why no allow rule can vouch for the whole command. */
  unaccounted?: string;
  /** Spellings of every command found, normalised, for deny rules. */
  denyViews: CommandView[];
  /** Why a command could run that deny rules cannot see. */
  denyBlind?: string;
}

/** Run their operands as a command: looked through for allow (options parsed) and deny (any offset). */
interface WrapperSpec {
  /** Options without an argument (short `-x` or long `--name`). */
  flags: readonly string[];
  /** Options that take an argument (`-n 5`, `-n5`, `--adjustment=5`, `--adjustment 5`). */
  withArg: readonly string[];
  /** Operands before the command (`timeout DURATION cmd`). */
  operands?: number;
  /** `NAME=value` operands before the command (env). */
  assignments?: boolean;
  /** `nice -10 cmd`. */
  numericOption?: boolean;
  /** With one of these the wrapper runs nothing (`command -v rm` only prints a path). */
  noRun?: readonly string[];
}

const WRAPPERS: Record<string, WrapperSpec> = {
  command: { flags: ['-p'], withArg: [], noRun: ['-v', '-V'] },
  builtin: { flags: [], withArg: [] },
  exec: { flags: ['-c', '-l'], withArg: ['-a'] },
  env: {
    flags: ['-i', '-0', '--ignore-environment', '--null', '-'],
    withArg: ['-u', '--unset', '-C', '--chdir'],
    assignments: true,
  },
  nice: { flags: [], withArg: ['-n', '--adjustment'], numericOption: true },
  nohup: { flags: [], withArg: [] },
  time: { flags: ['-p'], withArg: [] },
  timeout: {
    flags: ['--preserve-status', '--foreground', '-v', '--verbose'],
    withArg: ['-s', '--signal', '-k', '--kill-after'],
    operands: 1,
  },
  stdbuf: { flags: [], withArg: ['-i', '-o', '-e', '--input', '--output', '--error'] },
  setsid: { flags: ['-c', '-f', '-w', '--ctty', '--fork', '--wait'], withArg: [] },
  xargs: {
    flags: [
      '-0',
      '-r',
      '-t',
      '-p',
      '-x',
      '-o',
      '--null',
      '--no-run-if-empty',
      '--verbose',
      '--interactive',
      '--exit',
      '--open-tty',
    ],
    withArg: [
      '-a',
      '-d',
      '-E',
      '-I',
      '-L',
      '-n',
      '-P',
      '-s',
      '--arg-file',
      '--delimiter',
      '--max-lines',
      '--max-args',
      '--max-procs',
      '--max-chars',
      '--process-slot-var',
    ],
  },
};

/** Run their operands as a command, with options we do not parse: deny looks at every offset, allow asks. */
const OPAQUE_WRAPPERS = new Set([
  'sudo',
  'doas',
  'su',
  'runuser',
  'pkexec',
  'chroot',
  'ionice',
  'chrt',
  'taskset',
  'flock',
  'unbuffer',
  'strace',
  'ltrace',
  'gdb',
  'valgrind',
  'firejail',
  'unshare',
  'nsenter',
  'systemd-run',
  'script',
  'parallel',
  'watch',
  'ssh',
]);

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash', 'fish', 'busybox']);

/** Builtins that change what later names mean (aliases, loaded builtins, the command hash). */
const NAME_CHANGING = new Set(['alias', 'shopt', 'enable', 'hash']);

/** Builtins that run code from a string or a file, or change the shell's state. */
const NOT_ALLOWABLE: Record<string, string> = {
  eval: 'eval runs a string as a command',
  source: 'source runs a file in this shell',
  '.': '. runs a file in this shell',
  trap: 'trap runs a string as a command later',
  alias: 'alias changes what names mean',
  unalias: 'unalias changes what names mean',
  shopt: 'shopt changes how the shell parses',
  enable: 'enable changes the builtins',
  hash: 'hash changes where commands are found',
  set: 'set changes the shell state',
  declare: 'declare assigns variables',
  typeset: 'typeset assigns variables',
  export: 'export assigns variables',
  readonly: 'readonly assigns variables',
  local: 'local assigns variables',
  unset: 'unset changes variables',
  let: 'let assigns variables',
  read: 'read assigns variables',
  mapfile: 'mapfile assigns variables and may run a callback',
  readarray: 'readarray assigns variables and may run a callback',
  getopts: 'getopts assigns variables',
  compgen: 'compgen may run a command',
  complete: 'complete may run a command later',
  fc: 'fc runs commands from the history',
  bind: 'bind may run a command',
};

/** Builtins that run a string they are given (`mapfile -C cmd`, `compgen -C cmd`, `fc`). */
const RUNS_STRINGS = new Set(['mapfile', 'readarray', 'compgen', 'complete', 'fc', 'bind']);

const MAX_DEPTH = 4;
/** The most words a Bash rule may name (`Bash(git commit -m x:*)` is 4). */
export const MAX_RULE_WORDS = 64;
/** ssh's remote command starts after its options and the host: looked for within this many words. */
const SSH_COMMAND_START = 12;
/** `sudo sudo sudo …` would multiply the views; past this the command is too complex to vouch for. */
const MAX_VIEWS = 2000;

export function analyseBash(command: string): BashAnalysis {
  const a: BashAnalysis = { allowViews: [], denyViews: [] };
  collect(command, a, 0);
  if (a.unaccounted) a.allowViews = [];
  return a;
}

function collect(script: string, a: BashAnalysis, depth: number): void {
  const parsed = parseShell(script);
  if (parsed.opaque) {
    const why = `it contains ${parsed.opaque}`;
    a.unaccounted ??= why;
    a.denyBlind ??= why;
  }
  for (const cmd of parsed.commands) simple(cmd, a, depth);
}

/**
 * Variables a command may be given without hiding a command from deny rules. Others can make a
 * program run one: `PS4='$(rm x)' bash -x`, `BASH_ENV=f`, `GIT_SSH_COMMAND`, `PAGER`, `EDITOR`,
 * `NODE_OPTIONS`, `LD_PRELOAD`, `PATH`…
 */
const INERT_VARIABLES = new Set([
  'NODE_ENV',
  'CI',
  'DEBUG',
  'TZ',
  'LANG',
  'NO_COLOR',
  'FORCE_COLOR',
  'COLUMNS',
  'LINES',
  'RUST_LOG',
  'RUST_BACKTRACE',
  'PYTHONUNBUFFERED',
  'PYTHONDONTWRITEBYTECODE',
  'PORT',
  'VERBOSE',
]);

function simple(cmd: SimpleCommand, a: BashAnalysis, depth: number): void {
  if (cmd.assignments.length) a.unaccounted ??= `it assigns ${cmd.assignments[0]?.split('=')[0]}`;
  for (const assignment of cmd.assignments) {
    const name = assignment.split(/\+?=/)[0] as string;
    if (!INERT_VARIABLES.has(name) && !/^LC_[A-Z]+$/.test(name)) {
      a.denyBlind ??= `it sets ${name}, which can make a program run a command reloop cannot see`;
    }
  }
  const write = cmd.redirects.find((r) => r.kind === 'write');
  if (write) a.unaccounted ??= `it writes to ${write.target} (${write.op})`;
  // bash opens a network connection for these names, even for reading.
  const net = cmd.redirects.find((r) => /^\/dev\/(tcp|udp)\//.test(r.target));
  if (net) a.unaccounted ??= `it opens a network connection (${net.target})`;
  if (cmd.words.length === 0) return;
  const view: CommandView = { words: cmd.words.map((w) => w.value), glob: cmd.words.map((w) => w.glob) };
  if (view.glob[0]) a.unaccounted ??= `its command name ${view.words[0]} is a glob`;
  // `printf -v 'a[$(cmd)]'`, `test -v …`, `read 'a[…]'`: bash evaluates a subscript in a variable
  // name, command substitutions included, even when the word was quoted.
  const subscript = view.words.find((w) => w.includes('[') && /[$`]/.test(w));
  if (subscript !== undefined) {
    const why = `the word ${JSON.stringify(subscript)} may be evaluated as an array subscript`;
    a.unaccounted ??= why;
    a.denyBlind ??= why;
  }
  allowSide(view, a, depth);
  denySide(view, a, depth);
}

/** The views an allow rule must cover: the command, then what its wrappers run. */
function allowSide(view: CommandView, a: BashAnalysis, depth: number): void {
  if (a.allowViews.length >= MAX_VIEWS) {
    a.unaccounted ??= 'too many commands to check';
    return;
  }
  const name = view.words[0] as string;
  if (view.glob[0]) a.unaccounted ??= `its command name ${name} is a glob`;
  const risk = argumentRisk(view.words, view.glob, view.open === true);
  a.allowViews.push(risk ? { ...view, risk } : view);
  // `command printf -v PATH …` and `time printf -v …` run the builtin too.
  if (name === 'printf' && view.words.includes('-v')) a.unaccounted ??= 'printf -v assigns a variable';
  const notAllowable = NOT_ALLOWABLE[name];
  if (notAllowable) {
    a.unaccounted ??= notAllowable;
    return;
  }
  if (SHELLS.has(baseName(name)) && shellRuns(view).kind === 'string') {
    a.unaccounted ??= `${name} -c runs a string as a shell script`;
    return;
  }
  if (OPAQUE_WRAPPERS.has(baseName(name))) {
    a.unaccounted ??= `${name} runs another command with options reloop does not check`;
    return;
  }
  const spec = WRAPPERS[name];
  if (spec) {
    let inner = wrapped(view, spec);
    if (typeof inner === 'string') {
      a.unaccounted ??= inner;
      return;
    }
    if (inner && name === 'xargs') inner = xargsRuns(view, inner);
    if (inner?.words.length) {
      if (depth >= MAX_DEPTH) a.unaccounted ??= 'wrappers are nested too deeply';
      else {
        if (inner.glob[0]) a.unaccounted ??= `its command name ${inner.words[0]} is a glob`;
        allowSide(inner, a, depth + 1);
      }
    }
    return;
  }
  if (baseName(name) === 'find') {
    for (const inner of findExecs(view)) allowSide(inner, a, depth + 1);
  }
}

/** Every spelling of the commands run, for deny rules: generous, never parses a wrapper's options. */
function denySide(view: CommandView, a: BashAnalysis, depth: number): void {
  if (a.denyViews.length >= MAX_VIEWS) {
    a.denyBlind ??= 'too many commands to check';
    return;
  }
  if (baseName(view.words[0] as string) === 'xargs') view = xargsForDeny(view);
  pushDenyView(view, 0, a);
  if (depth >= MAX_DEPTH) {
    a.denyBlind ??= 'wrappers are nested too deeply';
    return;
  }
  const name = baseName(view.words[0] as string);
  if (NAME_CHANGING.has(name)) a.denyBlind ??= `${name} changes what later command names mean`;
  if (name === 'source' || name === '.') a.denyBlind ??= `${name} runs a file reloop cannot see`;
  if (RUNS_STRINGS.has(name)) a.denyBlind ??= `${name} may run a command reloop cannot see`;
  if (name === 'eval') collect(view.words.slice(1).join(' '), a, depth + 1);
  else if (name === 'trap') {
    const action = view.words[1];
    if (action !== undefined && !action.startsWith('-')) collect(action, a, depth + 1);
    else if (action !== undefined && view.words.length > 2) a.denyBlind ??= 'trap with options';
  } else if ((SHELLS.has(name) && name !== 'busybox') || name === 'su') {
    const runs = shellRuns(view);
    if (runs.kind === 'string') collectString(view, runs.at, a, depth);
    else if (name !== 'su')
      a.denyBlind ??= `${name} runs ${runs.kind === 'file' ? 'a script file' : 'its input'} reloop cannot see`;
  } else if (name === 'env') {
    // `env -S 'rm x'` splits its argument into a command line of its own.
    const w = view.words;
    for (let i = 1; i < w.length; i++) {
      const word = w[i] as string;
      if (word === '-S' || word === '--split-string') collectString(view, i + 1, a, depth);
      else if (word.startsWith('--split-string='))
        collect(word.slice('--split-string='.length), a, depth + 1);
      else if (/^-[^-]*S./.test(word)) collect(word.slice(word.indexOf('S') + 1), a, depth + 1);
      else if (/^-[^-]*S$/.test(word)) collectString(view, i + 1, a, depth);
    }
  } else if (name === 'watch') {
    collect(
      view.words
        .slice(1)
        .filter((w) => !w.startsWith('-'))
        .join(' '),
      a,
      depth + 1,
    );
  }
  if (WRAPPERS[name] || OPAQUE_WRAPPERS.has(name) || SHELLS.has(name)) {
    // Any later word may be where the wrapped command starts: `sudo -u root rm`, `nice -n 5 rm`.
    for (let k = 1; k < view.words.length; k++) {
      // Checked before copying: `nice a a a …` with 20 000 words must not copy them 20 000 times.
      if (a.denyViews.length >= MAX_VIEWS) {
        a.denyBlind ??= 'too many commands to check';
        break;
      }
      if (!DENY_SPECIAL.has(baseName(view.words[k] as string))) {
        // An ordinary name runs nothing else: its view is all deny rules need of it.
        pushDenyView(view, k, a);
        continue;
      }
      const sub: CommandView = { words: view.words.slice(k), glob: view.glob.slice(k) };
      denySide(view.open ? { ...sub, open: true } : sub, a, depth + 1);
    }
    // Some hand a word to a shell (`script -c 'rm x'`, `flock f -c …`, `parallel 'rm {}'`), and
    // ssh joins its words into one remote command line (`ssh -p 22 host 'rm x'`; the command
    // starts after a few options and the host).
    if (OPAQUE_WRAPPERS.has(name)) {
      for (let k = 1; k < view.words.length && a.denyViews.length < MAX_VIEWS; k++) {
        const word = view.words[k] as string;
        if (/[\s;&|<>()`$]/.test(word)) collect(word, a, depth + 1);
        if (name === 'ssh' && k <= SSH_COMMAND_START && k < view.words.length - 1)
          collect(view.words.slice(k).join(' '), a, depth + 1);
      }
    }
  } else if (name === 'find') {
    for (const inner of findExecs(view)) denySide(inner, a, depth + 1);
  }
}

/**
 * Deny rules compare at most MAX_RULE_WORDS words; a view keeps one more, so that a longer command
 * never equals an exact rule, without copying a 20 000-word command for each of its offsets.
 */
function pushDenyView(view: CommandView, from: number, a: BashAnalysis): void {
  const words = view.words.slice(from, from + MAX_RULE_WORDS + 1);
  words[0] = baseName(words[0] as string);
  const glob = view.glob.slice(from, from + MAX_RULE_WORDS + 1);
  a.denyViews.push(view.open ? { words, glob, open: true } : { words, glob });
}

/** Names whose deny-side handling goes beyond their own view (they run or change commands). */
const DENY_SPECIAL = new Set([
  ...Object.keys(WRAPPERS),
  ...OPAQUE_WRAPPERS,
  ...SHELLS,
  ...NAME_CHANGING,
  ...RUNS_STRINGS,
  'su',
  'eval',
  'trap',
  'source',
  '.',
  'find',
]);

/** The command a wrapper runs; undefined when it runs none; a string saying why it is unclear. */
function wrapped(view: CommandView, spec: WrapperSpec): CommandView | undefined | string {
  const w = view.words;
  const name = w[0];
  let operands = spec.operands ?? 0;
  let i = 1;
  const bad = (opt: string) => `${name} ${opt}: an option reloop does not know for ${name}`;
  for (; i < w.length; i++) {
    const word = w[i] as string;
    if (view.glob[i]) return `${name} has a glob before its command`;
    if (word === '--') {
      i++;
      break;
    }
    if (spec.noRun?.includes(word)) return undefined;
    if (spec.numericOption && /^-\d+$/.test(word)) continue;
    if (spec.flags.includes(word)) continue;
    if (word.startsWith('--')) {
      const eq = word.indexOf('=');
      const opt = eq < 0 ? word : word.slice(0, eq);
      if (!spec.withArg.includes(opt)) return bad(word);
      if (eq < 0) i++;
      continue;
    }
    if (word.startsWith('-') && word.length > 1) {
      const cluster = shortCluster(word, spec);
      if (cluster === 'bad') return bad(word);
      if (cluster === 'takes-next') i++;
      continue;
    }
    if (spec.assignments && /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) {
      return `${name} assigns ${word.split('=')[0]} for the command it runs`;
    }
    if (operands > 0) {
      operands--;
      continue;
    }
    break;
  }
  return { words: w.slice(i), glob: view.glob.slice(i) };
}

/** `-rn5` style clusters: 'ok', 'takes-next' (the last option's argument is the next word), 'bad'. */
function shortCluster(word: string, spec: WrapperSpec): 'ok' | 'takes-next' | 'bad' {
  for (let k = 1; k < word.length; k++) {
    const opt = `-${word[k]}`;
    if (spec.withArg.includes(opt)) return k === word.length - 1 ? 'takes-next' : 'ok';
    if (!spec.flags.includes(opt)) return 'bad';
  }
  return 'ok';
}

/**
 * What a shell is told to run: a `-c` string (at `at`, which may be past the end: `xargs sh -c`
 * reads it from its input), a script file, or its input. Options are read as bash reads them:
 * `-o name` and `-O name` take the next word, clusters combine (`-ec`), `--` and `-` end them;
 * su takes `-c cmd` anywhere (`su root -c cmd`).
 */
function shellRuns(view: CommandView): { kind: 'string'; at: number } | { kind: 'file' | 'input' } {
  const w = view.words;
  if (baseName(w[0] as string) === 'su') {
    for (let i = 1; i < w.length; i++) {
      const word = w[i] as string;
      if (word === '-c' || word === '--command') return { kind: 'string', at: i + 1 };
      if (/^-[A-Za-z]*c/.test(word) || word.startsWith('--command=')) return { kind: 'string', at: i };
    }
    return { kind: 'input' };
  }
  let c = false;
  let i = 1;
  for (; i < w.length; i++) {
    const word = w[i] as string;
    if (word === '--' || word === '-') {
      i++;
      break;
    }
    if (!/^[-+]./.test(word)) break;
    if (word.startsWith('--')) {
      if (word === '--command') return { kind: 'string', at: i + 1 };
      if (word === '--rcfile' || word === '--init-file') i++;
      continue;
    }
    for (const ch of word.slice(1)) {
      if (ch === 'c') c = true;
      else if (ch === 'o' || ch === 'O') i++; // -o errexit, +O extglob
    }
  }
  if (c) return { kind: 'string', at: i };
  return i < w.length ? { kind: 'file' } : { kind: 'input' };
}

/**
 * Deny rules look into the command string at `view.words[at]`; a string that is not there (it
 * comes from xargs' input) or that bash, xargs or find fill in at run time hides its commands.
 */
function collectString(view: CommandView, at: number, a: BashAnalysis, depth: number): void {
  let text = view.words[at];
  // `su -c'rm x'` and `--command=rm x` carry the string in the option's own word.
  if (text !== undefined && /^-[A-Za-z]*c./.test(text)) text = text.slice(text.indexOf('c') + 1);
  else if (text?.startsWith('--command=')) text = text.slice('--command='.length);
  if (text === undefined || view.glob[at]) {
    a.denyBlind ??= `${view.words[0]} runs a command string reloop cannot see`;
    return;
  }
  collect(text, a, depth + 1);
}

/** xargs' replace-string (`-I R`, `-iR`, `-i`, `--replace[=R]`), or undefined. */
function xargsReplace(words: readonly string[]): { replace: string; at: number } | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '--' || !w.startsWith('-')) return undefined;
    if (w === '-I')
      return words[i + 1] === undefined ? undefined : { replace: words[i + 1] as string, at: i + 1 };
    if (w.startsWith('-I')) return { replace: w.slice(2), at: i };
    if (w === '-i' || w === '--replace') return { replace: '{}', at: i };
    if (w.startsWith('-i')) return { replace: w.slice(2), at: i };
    if (w.startsWith('--replace=')) return { replace: w.slice('--replace='.length), at: i };
  }
  return undefined;
}

/** A word xargs or find fills in at run time: it may be anything. */
const FILLED: { value: string; glob: boolean } = { value: '*', glob: true };

function fillIn(view: CommandView, from: number, marker: string): CommandView {
  const words = view.words.slice();
  const glob = view.glob.slice();
  for (let i = from; i < words.length; i++) {
    if ((words[i] as string).includes(marker)) {
      words[i] = FILLED.value;
      glob[i] = FILLED.glob;
    }
  }
  return { ...view, words, glob };
}

/**
 * What xargs runs, as rules must see it: with `-I R` every word containing R is replaced by a
 * line of input (so it may be anything); without, input lines are appended (an open view).
 */
function xargsRuns(view: CommandView, inner: CommandView): CommandView {
  const r = xargsReplace(view.words);
  if (!r) return { ...inner, open: true };
  if (r.replace === '') return { ...inner, open: true };
  return fillIn(inner, 1, r.replace);
}

function xargsForDeny(view: CommandView): CommandView {
  const r = xargsReplace(view.words);
  if (!r || r.replace === '') return { ...view, open: true };
  const filled = fillIn(view, r.at + 1, r.replace);
  return filled;
}

/** The commands `find … -exec cmd args ;` (and -execdir, -ok, -okdir) runs. */
function findExecs(view: CommandView): CommandView[] {
  const out: CommandView[] = [];
  const w = view.words;
  for (let i = 1; i < w.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(w[i] as string)) continue;
    let j = i + 1;
    while (j < w.length && w[j] !== ';' && w[j] !== '+') j++;
    // find puts a path wherever `{}` occurs, command name included (`-exec {} x ;` runs the file).
    const run = fillIn({ words: w.slice(i + 1, j), glob: view.glob.slice(i + 1, j) }, 0, '{}');
    out.push(w[j] === '+' ? { ...run, open: true } : run);
    i = j;
  }
  return out;
}

function baseName(word: string): string {
  return word.includes('/') ? path.posix.basename(word) : word;
}

/** The words of a rule's command (`npm test`, `git commit -m "x"`), parsed like a command. */
export function ruleWords(spec: string): string[] | string {
  const parsed = parseShell(spec);
  if (parsed.opaque) return `it contains ${parsed.opaque}`;
  const [cmd, ...more] = parsed.commands;
  if (!cmd || more.length) return 'a Bash rule names exactly one simple command';
  if (cmd.assignments.length || cmd.redirects.length) {
    return 'a Bash rule names a command and its arguments only (no assignments or redirections)';
  }
  if (cmd.words.length > MAX_RULE_WORDS) return `a Bash rule names at most ${MAX_RULE_WORDS} words`;
  return cmd.words.map((w) => w.value);
}

/**
 * Whether `view` starts with (`prefix`) or is exactly `rule`. `generous` (deny rules): a glob word
 * matches any rule word it could expand to, and the rule's command name is compared by basename.
 */
export function viewMatches(
  view: CommandView,
  rule: readonly string[],
  prefix: boolean,
  generous: boolean,
): boolean {
  const n = view.words.length;
  // An open view gets more words at run time: never exactly a rule's command for allow; for deny,
  // the words it lacks may be the rule's next ones (`echo -rf / | xargs rm` is `rm -rf /`).
  const growable = view.open === true && generous;
  if (view.open && !generous && !prefix) return false;
  if (n < rule.length && !growable) return false;
  if (!prefix && n > rule.length) return false;
  for (let i = 0; i < Math.min(n, rule.length); i++) {
    let want = rule[i] as string;
    if (generous && i === 0) want = baseName(want);
    const got = view.words[i] as string;
    if (got === want) continue;
    if (generous && view.glob[i] && globCouldMatch(got, want)) continue;
    return false;
  }
  return true;
}

/** Whether bash pathname expansion of `pattern` could produce `literal`. Unsure means yes. */
export function globCouldMatch(pattern: string, literal: string): boolean {
  const base = pattern.includes('/') ? path.posix.basename(pattern) : pattern;
  let re = '';
  for (let i = 0; i < base.length; i++) {
    const c = base[i] as string;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = base.indexOf(']', i + 2);
      if (end < 0) {
        re += '\\[';
        continue;
      }
      let body = base.slice(i + 1, end);
      if (body.startsWith('!')) body = `^${body.slice(1)}`;
      re += `[${body.replace(/\\/g, '\\\\')}]`;
      i = end;
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  }
  try {
    return new RegExp(`^${re}$`, 's').test(literal);
  } catch {
    return true;
  }
}
