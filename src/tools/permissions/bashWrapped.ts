import { baseName, type CommandView } from './bashMatch.ts';
import type { WrapperSpec } from './bashTables.ts';

/**
 * What a wrapper, a shell, xargs or find runs, read from its words: the command after a wrapper's
 * options, a shell's `-c` string, the words xargs and find fill in at run time.
 */

/** The command a wrapper runs; undefined when it runs none; a string saying why it is unclear. */
export function wrapped(view: CommandView, spec: WrapperSpec): CommandView | undefined | string {
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
    const clears = clearedBy(word, spec);
    if (clears) return `${name} ${clears} changes the environment of the command it runs`;
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

/** The environment-clearing option `word` is or starts with (`-iu`, `--unset=X`), if any. */
function clearedBy(word: string, spec: WrapperSpec): string | undefined {
  const clears = spec.clearsEnv;
  if (!clears) return undefined;
  if (clears.includes(word)) return word;
  if (word.startsWith('--')) {
    const opt = word.split('=')[0] as string;
    return clears.includes(opt) ? word : undefined;
  }
  if (!word.startsWith('-')) return undefined;
  // In a cluster, the letters up to the first one that takes a value (`-C/dir` is one option).
  for (let k = 1; k < word.length; k++) {
    const opt = `-${word[k]}`;
    if (clears.includes(opt)) return word;
    if (spec.withArg.includes(opt)) break;
  }
  return undefined;
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
export function shellRuns(view: CommandView): { kind: 'string'; at: number } | { kind: 'file' | 'input' } {
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
export function xargsRuns(view: CommandView, inner: CommandView): CommandView {
  const r = xargsReplace(view.words);
  if (!r) return { ...inner, open: true };
  if (r.replace === '') return { ...inner, open: true };
  return fillIn(inner, 1, r.replace);
}

export function xargsForDeny(view: CommandView): CommandView {
  const r = xargsReplace(view.words);
  if (!r || r.replace === '') return { ...view, open: true };
  const filled = fillIn(view, r.at + 1, r.replace);
  return filled;
}

/** The commands `find … -exec cmd args ;` (and -execdir, -ok, -okdir) runs. */
export function findExecs(view: CommandView): CommandView[] {
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
