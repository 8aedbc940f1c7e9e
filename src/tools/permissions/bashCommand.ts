import path from 'node:path';
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

function simple(cmd: SimpleCommand, a: BashAnalysis, depth: number): void {
  if (cmd.assignments.length) a.unaccounted ??= `it assigns ${cmd.assignments[0]?.split('=')[0]}`;
  const write = cmd.redirects.find((r) => r.kind === 'write');
  if (write) a.unaccounted ??= `it writes to ${write.target} (${write.op})`;
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
  if (view.words[0] === 'printf' && view.words.includes('-v'))
    a.unaccounted ??= 'printf -v assigns a variable';
  allowSide(view, a, depth);
  denySide(view, a, depth);
}

/** The views an allow rule must cover: the command, then what its wrappers run. */
function allowSide(view: CommandView, a: BashAnalysis, depth: number): void {
  if (a.allowViews.length >= MAX_VIEWS) {
    a.unaccounted ??= 'too many commands to check';
    return;
  }
  a.allowViews.push(view);
  const name = view.words[0] as string;
  const notAllowable = NOT_ALLOWABLE[name];
  if (notAllowable) {
    a.unaccounted ??= notAllowable;
    return;
  }
  if (SHELLS.has(baseName(name)) && shellScriptArg(view.words) !== undefined) {
    a.unaccounted ??= `${name} -c runs a string as a shell script`;
    return;
  }
  if (OPAQUE_WRAPPERS.has(baseName(name))) {
    a.unaccounted ??= `${name} runs another command with options reloop does not check`;
    return;
  }
  const spec = WRAPPERS[name];
  if (spec) {
    const inner = wrapped(view, spec);
    if (typeof inner === 'string') {
      a.unaccounted ??= inner;
      return;
    }
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
  const words = view.words.slice();
  words[0] = baseName(words[0] as string);
  const norm: CommandView = { words, glob: view.glob };
  a.denyViews.push(norm);
  if (depth >= MAX_DEPTH) {
    a.denyBlind ??= 'wrappers are nested too deeply';
    return;
  }
  const name = words[0] as string;
  if (NAME_CHANGING.has(name)) a.denyBlind ??= `${name} changes what later command names mean`;
  if (name === 'source' || name === '.') a.denyBlind ??= `${name} runs a file reloop cannot see`;
  if (RUNS_STRINGS.has(name)) a.denyBlind ??= `${name} may run a command reloop cannot see`;
  if (name === 'eval') collect(view.words.slice(1).join(' '), a, depth + 1);
  else if (name === 'trap') {
    const action = view.words[1];
    if (action !== undefined && !action.startsWith('-')) collect(action, a, depth + 1);
    else if (action !== undefined && view.words.length > 2) a.denyBlind ??= 'trap with options';
  } else if (SHELLS.has(name) || name === 'su') {
    const script = shellScriptArg(view.words);
    if (script !== undefined) collect(script, a, depth + 1);
  } else if (name === 'env') {
    // `env -S 'rm x'` splits its argument into a command line of its own.
    const w = view.words;
    for (let i = 1; i < w.length; i++) {
      const word = w[i] as string;
      if (word === '-S' || word === '--split-string') collect(w[i + 1] ?? '', a, depth + 1);
      else if (word.startsWith('--split-string='))
        collect(word.slice('--split-string='.length), a, depth + 1);
      else if (/^-[^-]*S/.test(word))
        collect(word.slice(word.indexOf('S') + 1) || (w[i + 1] ?? ''), a, depth + 1);
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
      denySide({ words: view.words.slice(k), glob: view.glob.slice(k) }, a, depth + 1);
    }
  } else if (name === 'find') {
    for (const inner of findExecs(view)) denySide(inner, a, depth + 1);
  }
}

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

/** `bash -c 'script'`, `sh -ec 'script'`, `su -c 'script'`: the script, or undefined. */
function shellScriptArg(words: readonly string[]): string | undefined {
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '--' || !w.startsWith('-')) return undefined;
    if (/^-[A-Za-z]*c[A-Za-z]*$/.test(w) || w === '--command') return words[i + 1] ?? '';
  }
  return undefined;
}

/** The commands `find … -exec cmd args ;` (and -execdir, -ok, -okdir) runs. */
function findExecs(view: CommandView): CommandView[] {
  const out: CommandView[] = [];
  const w = view.words;
  for (let i = 1; i < w.length; i++) {
    if (!['-exec', '-execdir', '-ok', '-okdir'].includes(w[i] as string)) continue;
    let j = i + 1;
    while (j < w.length && w[j] !== ';' && w[j] !== '+') j++;
    out.push({ words: w.slice(i + 1, j), glob: view.glob.slice(i + 1, j) });
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
  if (prefix ? view.words.length < rule.length : view.words.length !== rule.length) return false;
  for (let i = 0; i < rule.length; i++) {
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
