import { baseName, type CommandView, MAX_RULE_WORDS } from './bashMatch.ts';
import {
  DENY_SPECIAL,
  INERT_VARIABLES,
  NAME_CHANGING,
  NOT_ALLOWABLE,
  OPAQUE_WRAPPERS,
  RUNS_STRINGS,
  SHELLS,
  WRAPPERS,
} from './bashTables.ts';
import { findExecs, shellRuns, wrapped, xargsForDeny, xargsRuns } from './bashWrapped.ts';
import { argumentRisk } from './programArgs.ts';
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

const MAX_DEPTH = 4;
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
