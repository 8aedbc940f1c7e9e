import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { ResolvedPath } from '../paths.ts';
import { normaliseCommand, splitCommand } from './bashCommand.ts';

export class PermissionRuleError extends Error {
  readonly code = 'INVALID_PERMISSION_RULE';
  constructor(
    readonly rule: string,
    readonly detail: string,
  ) {
    super(`invalid permission rule ${JSON.stringify(rule)}: ${detail}`);
    this.name = 'PermissionRuleError';
  }
}

/**
 * One rule: a whole tool (`Glob`), a Bash command (`Bash(git status)` exact, `Bash(npm test:*)`
 * prefix on word boundaries), or a path glob for any other tool (`Edit(src/**)`), matched with
 * picomatch against the path relative to cwd, or against the real path when the glob is absolute
 * (`Read(/etc/hosts)`, `Read(~/notes/**)`).
 */
export type PermissionRule =
  | { raw: string; tool: string; kind: 'tool' }
  | { raw: string; tool: string; kind: 'exact' | 'prefix'; command: string }
  | { raw: string; tool: string; kind: 'path'; absolute: boolean; matches: (p: string) => boolean };

const RULE = /^([A-Za-z][\w.-]*)(?:\((.*)\))?$/s;

export function parseRule(raw: string): PermissionRule {
  const m = RULE.exec(raw.trim());
  if (!m) throw new PermissionRuleError(raw, 'expected ToolName or ToolName(specifier)');
  const tool = m[1] as string;
  const spec = m[2]?.trim();
  if (spec === undefined || spec === '*') return { raw, tool, kind: 'tool' };
  if (spec === '')
    throw new PermissionRuleError(raw, 'empty specifier: write the bare tool name for the whole tool');
  if (tool === 'Bash') {
    if (!spec.endsWith(':*')) return { raw, tool, kind: 'exact', command: normaliseCommand(spec) };
    const prefix = normaliseCommand(spec.slice(0, -2));
    if (!prefix) throw new PermissionRuleError(raw, 'empty command prefix before ":*"');
    return { raw, tool, kind: 'prefix', command: prefix };
  }
  const expanded = spec.startsWith('~/') ? path.join(os.homedir(), spec.slice(2)) : spec;
  const absolute = path.isAbsolute(expanded);
  // dot: rules about `**` should cover dotfiles too; `..` segments are never matched by `**`.
  const matches = picomatch(expanded, { dot: true });
  return { raw, tool, kind: 'path', absolute, matches };
}

export function parseRules(raws: readonly string[]): PermissionRule[] {
  return raws.map(parseRule);
}

/** What a call is about, as far as rules can see. */
export interface RuleSubject {
  tool: string;
  command?: string;
  path?: ResolvedPath;
}

function commandMatches(rule: PermissionRule, segment: string): boolean {
  if (rule.kind === 'exact') return segment === rule.command;
  if (rule.kind === 'prefix') return segment === rule.command || segment.startsWith(`${rule.command} `);
  return false;
}

function lexicalRelative(p: ResolvedPath, cwd: string): string {
  return path.relative(path.resolve(cwd), p.absolute).split(path.sep).join('/') || '.';
}

/**
 * A deny rule matches generously: the whole command or any part of it; the path as written or as
 * it really resolves. Better to refuse a call the user meant to allow than the reverse.
 */
export function denyMatches(rule: PermissionRule, s: RuleSubject, cwd: string): boolean {
  if (rule.tool !== s.tool) return false;
  if (rule.kind === 'tool') return true;
  if (rule.kind === 'path') {
    if (!s.path) return false;
    if (rule.absolute) return rule.matches(s.path.real) || rule.matches(s.path.absolute);
    return rule.matches(s.path.relative) || rule.matches(lexicalRelative(s.path, cwd));
  }
  if (s.command === undefined) return false;
  const whole = normaliseCommand(s.command);
  return (
    commandMatches(rule, whole) || splitCommand(s.command).segments.some((seg) => commandMatches(rule, seg))
  );
}

/**
 * The allow rules that together allow the call, or undefined. An allow rule matches strictly:
 * paths only as they really resolve (so `src/**` cannot reach through a symlink out of cwd), and
 * every part of a compound command must be allowed, none of it opaque.
 */
export function allowMatch(rules: readonly PermissionRule[], s: RuleSubject): PermissionRule[] | undefined {
  const mine = rules.filter((r) => r.tool === s.tool);
  const whole = mine.find((r) => r.kind === 'tool');
  if (whole) return [whole];
  if (s.path) {
    const p = s.path;
    const hit = mine.find((r) => r.kind === 'path' && r.matches(r.absolute ? p.real : p.relative));
    return hit ? [hit] : undefined;
  }
  if (s.command === undefined) return undefined;
  const split = splitCommand(s.command);
  if (split.opaque || split.segments.length === 0) return undefined;
  const used: PermissionRule[] = [];
  for (const seg of split.segments) {
    const hit = mine.find((r) => commandMatches(r, seg));
    if (!hit) return undefined;
    if (!used.includes(hit)) used.push(hit);
  }
  return used;
}
