import path from 'node:path';
import type { ArgumentRisk } from './programArgs.ts';
import { parseShell } from './shellParse.ts';

/**
 * How a Bash rule's words meet a command: the view analyseBash (bashCommand.ts) makes of each
 * command it finds, and the comparison of a view with a rule (strict for allow, generous for deny).
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

/** The most words a Bash rule may name (`Bash(git commit -m x:*)` is 4). */
export const MAX_RULE_WORDS = 64;

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
  const base = baseName(pattern);
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

/** The name a path runs (`/bin/rm` is `rm`); a word without a slash is its own name. */
export function baseName(word: string): string {
  return word.includes('/') ? path.posix.basename(word) : word;
}
