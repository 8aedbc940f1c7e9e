import path from 'node:path';
import {
  type PermissionRule,
  PermissionRuleError,
  parseRule,
  type RuleBehavior,
  type RuleOrigin,
} from './rules.ts';

/**
 * One rule as a settings layer or a flag states it (plain data; `src/settings` makes these from
 * every layer, the CLI from `--allow` / `--allowedTools`…).
 */
export interface RuleEntry {
  source: string;
  behavior: RuleBehavior;
  rule: string;
  /** Where its `/path` patterns are anchored; default the working directory. */
  root?: string;
  file?: string | null;
}

/** The rules of a policy by list, each knowing where it came from, and what could not be read. */
export interface RuleSet {
  allow: PermissionRule[];
  ask: PermissionRule[];
  deny: PermissionRule[];
  /** One per rule that could not be parsed, naming the file (or flag) and the rule. */
  warnings: string[];
}

const TOOL_NAME = /^\s*(mcp__[A-Za-z0-9_.-]+|[A-Za-z][\w.-]*)/;

function where(e: RuleEntry): string {
  if (e.file) return e.file;
  return e.source === 'cliArg' ? 'the command line' : e.source === 'flagSettings' ? '--settings' : e.source;
}

/**
 * Compiles rule entries. A rule that cannot be parsed is never a silent allow: an allow rule is
 * dropped with a warning; a deny or ask rule whose tool can still be read becomes an ask for that
 * whole tool (fail closed: the user decides what the rule would have), with a warning; one whose
 * tool cannot even be read is a warning only.
 */
export function compileRuleEntries(
  entries: readonly RuleEntry[],
  opts: { cwd?: string; home?: string } = {},
): RuleSet {
  const set: RuleSet = { allow: [], ask: [], deny: [], warnings: [] };
  const cwd = opts.cwd === undefined ? undefined : path.resolve(opts.cwd);
  for (const e of entries) {
    // Anchored at the working directory: matched on the path relative to its real path.
    const root = e.root === undefined || path.resolve(e.root) === cwd ? undefined : path.resolve(e.root);
    const origin: RuleOrigin = {
      source: e.source,
      behavior: e.behavior,
      ...(root !== undefined ? { root } : {}),
      file: e.file ?? null,
    };
    try {
      const ctx = { ...(root ? { root } : {}), ...(opts.home ? { home: opts.home } : {}) };
      set[e.behavior].push(parseRule(e.rule, ctx, origin));
    } catch (err) {
      if (!(err instanceof PermissionRuleError)) throw err;
      const tool = e.behavior === 'allow' ? undefined : TOOL_NAME.exec(e.rule)?.[1];
      const then =
        e.behavior === 'allow'
          ? 'it allows nothing'
          : tool
            ? `every ${tool} call is asked instead`
            : 'it could not be applied';
      set.warnings.push(
        `${where(e)}: ${e.behavior} rule ${JSON.stringify(e.rule)} cannot be read (${err.detail}): ${then}`,
      );
      if (tool) set.ask.push({ raw: e.rule, tool, kind: 'tool', origin, unreadable: true });
    }
  }
  return set;
}

/** Command-line rule strings as entries of source `cliArg`, anchored at the working directory. */
export function cliRuleEntries(
  lists: { allow?: readonly string[]; ask?: readonly string[]; deny?: readonly string[] },
  source = 'cliArg',
): RuleEntry[] {
  const out: RuleEntry[] = [];
  for (const behavior of ['allow', 'ask', 'deny'] as const) {
    for (const rule of lists[behavior] ?? []) out.push({ source, behavior, rule, file: null });
  }
  return out;
}

/** `permission.decided.by` for a rule: `<source> <behavior> <rule>` (`projectSettings deny Read(./secrets/**)`). */
export function ruleBy(rule: PermissionRule, behavior: RuleBehavior): string {
  return `${rule.origin?.source ?? 'cliArg'} ${rule.origin?.behavior ?? behavior} ${rule.raw}`;
}

/** Whether the rule stands for one that could not be read (an ask in place of a deny or ask). */
export function isUnreadable(rule: PermissionRule): boolean {
  return rule.unreadable === true;
}
