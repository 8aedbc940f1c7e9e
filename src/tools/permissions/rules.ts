import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { ResolvedPath } from '../paths.ts';
import { analyseBash, type BashAnalysis } from './bashCommand.ts';
import { ruleWords, viewMatches } from './bashMatch.ts';
import { domainMatches, parseDomainSpec } from './webFetchDomains.ts';

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
 * prefix on word boundaries; its words are parsed like a command, so quoting is as in bash), or a
 * path glob for any other tool (`Edit(src/**)`), matched with picomatch against the path relative
 * to cwd, or against the real path when the glob is absolute (`Read(/etc/hosts)`, `Read(~/notes/**)`).
 */
export type PermissionRule =
  | { raw: string; tool: string; kind: 'tool' }
  /** `WebFetch(domain:example.com)` (webFetchDomains.ts). */
  | { raw: string; tool: string; kind: 'domain'; domain: string }
  | { raw: string; tool: string; kind: 'exact' | 'prefix'; command: string; words: string[] }
  | {
      raw: string;
      tool: string;
      kind: 'path';
      /** The glob as given (after `~/` expansion). */
      pattern: string;
      absolute: boolean;
      matches: (p: string) => boolean;
    };

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
    const prefix = spec.endsWith(':*');
    const text = prefix ? spec.slice(0, -2).trim() : spec;
    if (!text) throw new PermissionRuleError(raw, 'empty command prefix before ":*"');
    const words = ruleWords(text);
    if (typeof words === 'string') throw new PermissionRuleError(raw, words);
    return { raw, tool, kind: prefix ? 'prefix' : 'exact', command: words.join(' '), words };
  }
  if (tool === 'WebFetch' && spec.startsWith('domain:')) {
    const d = parseDomainSpec(spec);
    if (typeof d === 'string') throw new PermissionRuleError(raw, d);
    return { raw, tool, kind: 'domain', domain: d.domain };
  }
  const expanded = spec.startsWith('~/') ? path.join(os.homedir(), spec.slice(2)) : spec;
  const absolute = path.isAbsolute(expanded);
  // dot: rules about `**` should cover dotfiles too; `..` segments are never matched by `**`.
  const matches = picomatch(expanded, { dot: true });
  return { raw, tool, kind: 'path', pattern: expanded, absolute, matches };
}

export function parseRules(raws: readonly string[]): PermissionRule[] {
  return raws.map(parseRule);
}

/** What a call is about, as far as rules can see. */
export interface RuleSubject {
  tool: string;
  command?: string;
  path?: ResolvedPath;
  /** The command's analysis, made once per call (bashSubject). */
  bash?: BashAnalysis;
  /** The host a WebFetch call reaches. */
  host?: string;
}

function bashOf(s: RuleSubject): BashAnalysis | undefined {
  if (s.command === undefined) return undefined;
  s.bash ??= analyseBash(s.command);
  return s.bash;
}

function lexicalRelative(p: ResolvedPath, cwd: string): string {
  return path.relative(path.resolve(cwd), p.absolute).split(path.sep).join('/') || '.';
}

/**
 * A deny rule matches generously: any command the string runs, in any spelling bash accepts (see
 * bashCommand.ts); the path as written or as it really resolves. Better to refuse a call the user
 * meant to allow than the reverse.
 */
export function denyMatches(rule: PermissionRule, s: RuleSubject, cwd: string): boolean {
  if (rule.tool !== s.tool) return false;
  if (rule.kind === 'tool') return true;
  if (rule.kind === 'domain') return s.host !== undefined && domainMatches(rule.domain, s.host, true);
  if (rule.kind === 'path') {
    if (!s.path) return false;
    if (rule.absolute) return rule.matches(s.path.real) || rule.matches(s.path.absolute);
    return rule.matches(s.path.relative) || rule.matches(lexicalRelative(s.path, cwd));
  }
  const bash = bashOf(s);
  if (!bash) return false;
  return bash.denyViews.some((v) => viewMatches(v, rule.words, rule.kind === 'prefix', true));
}

/**
 * The allow rules that together allow the call, or undefined. An allow rule matches strictly:
 * paths only as they really resolve (so `src/**` cannot reach through a symlink out of cwd), and
 * every command a Bash string runs must be allowed by its literal words, with nothing the parser
 * could not account for (see bashCommand.ts).
 */
export function allowMatch(rules: readonly PermissionRule[], s: RuleSubject): PermissionRule[] | undefined {
  const mine = rules.filter((r) => r.tool === s.tool);
  const whole = mine.find((r) => r.kind === 'tool');
  if (whole) return [whole];
  if (s.host !== undefined) {
    const host = s.host;
    const hit = mine.find((r) => r.kind === 'domain' && domainMatches(r.domain, host, false));
    return hit ? [hit] : undefined;
  }
  if (s.path) {
    const p = s.path;
    const hit = mine.find((r) => r.kind === 'path' && r.matches(r.absolute ? p.real : p.relative));
    return hit ? [hit] : undefined;
  }
  const bash = bashOf(s);
  if (!bash || bash.unaccounted || bash.allowViews.length === 0) return undefined;
  const used: PermissionRule[] = [];
  for (const view of bash.allowViews) {
    const hit = mine.find(
      (r) =>
        (r.kind === 'exact' || r.kind === 'prefix') &&
        viewMatches(view, r.words, r.kind === 'prefix', false) &&
        // Options that make the program run or change something are vouched for only by a rule
        // that trusts the whole program (programArgs.ts).
        (!view.risk || (view.risk.trustsBareRule && r.words.length === 1)),
    );
    if (!hit) return undefined;
    if (!used.includes(hit)) used.push(hit);
  }
  return used;
}

/** Whether a path rule names a protected directory or file itself (`Edit(.git/hooks/**)`), not by `**`. */
export function namesProtected(rule: PermissionRule, name: string): boolean {
  return rule.kind === 'path' && rule.pattern.toLowerCase().split('/').includes(name.toLowerCase());
}
