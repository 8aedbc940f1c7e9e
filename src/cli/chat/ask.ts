import path from 'node:path';
import { parseRule } from '../../tools/permissions/rules.ts';
import type { PermissionRequest } from '../../tools/types.ts';

/**
 * The answers to a permission ask, as Claude Code offers them: yes; yes and don't ask again
 * for this rule, in this session or in this project (`.claude/settings.local.json`); no, with
 * an optional reason the model is told. Kept apart from the terminal so `run`'s prompt can
 * offer the same choices (src/cli/terminalAsk.ts).
 */
export type AskChoice =
  | { kind: 'yes' }
  | { kind: 'always'; scope: 'session' | 'project'; rule: string }
  | { kind: 'no'; reason?: string };

/**
 * The rule "don't ask again" adds for a call: the exact Bash command, the WebFetch host, the
 * file (relative to the working directory) for a file tool, the tool itself otherwise. Null
 * when no rule can say exactly this call (a path outside the directory, a name that reads as
 * a glob, a command the rule syntax cannot hold): then only yes and no are offered.
 */
export function ruleFor(req: PermissionRequest): string | null {
  const tool = req.tool.name;
  const input = (typeof req.input === 'object' && req.input !== null ? req.input : {}) as Record<
    string,
    unknown
  >;
  let rule: string | null;
  if (tool === 'Bash') {
    rule =
      typeof input.command === 'string' && !/[()\n]/.test(input.command) ? `Bash(${input.command})` : null;
  } else if (tool === 'WebFetch') {
    let host: string | null = null;
    try {
      host = typeof input.url === 'string' ? new URL(input.url).hostname : null;
    } catch {
      host = null;
    }
    rule = host ? `WebFetch(domain:${host})` : null;
  } else {
    const file = [input.file_path, input.notebook_path, input.path].find((v) => typeof v === 'string') as
      | string
      | undefined;
    if (file === undefined) rule = tool;
    else {
      const rel = path.relative(req.cwd, path.resolve(req.cwd, file));
      rule =
        rel && !rel.startsWith('..') && !path.isAbsolute(rel) && !/[*?[\]{}()!+@\\]/.test(rel)
          ? `${tool}(${rel})`
          : null;
    }
  }
  if (rule === null) return null;
  try {
    parseRule(rule);
    return rule;
  } catch {
    return null;
  }
}

/** The choices shown, numbered; `rule` null leaves out the two "don't ask again" ones. */
export function choiceLines(rule: string | null): string[] {
  return [
    '1. yes',
    ...(rule
      ? [
          `2. yes, and don't ask again for ${rule} in this session`,
          `3. yes, and don't ask again for ${rule} in this project (.claude/settings.local.json)`,
        ]
      : []),
    `${rule ? 4 : 2}. no (you can say why: the model is told)`,
  ];
}

/**
 * An answer typed at the choice prompt: a number, `y`/`yes`, `n`/`no`, or `no: <reason>` /
 * `n <reason>`. Undefined: not an answer (asked again).
 */
export function parseChoice(text: string, rule: string | null): AskChoice | 'no-reason' | undefined {
  const t = text.trim();
  const no = /^(?:n|no)(?:[:\s]\s*(.*))?$/is.exec(t);
  if (no) return no[1]?.trim() ? { kind: 'no', reason: no[1].trim() } : 'no-reason';
  if (/^(?:1|y|yes)$/i.test(t)) return { kind: 'yes' };
  if (rule && t === '2') return { kind: 'always', scope: 'session', rule };
  if (rule && t === '3') return { kind: 'always', scope: 'project', rule };
  if (t === (rule ? '4' : '2')) return 'no-reason';
  return undefined;
}
