import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { ResolvedPath } from '../paths.ts';
import { analyseBash, type BashAnalysis } from './bashCommand.ts';
import { baseName, type CommandView, ruleWords, viewMatches } from './bashMatch.ts';
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

export type RuleBehavior = 'allow' | 'ask' | 'deny';

/**
 * Where a rule comes from: its source by Claude Code's name (`projectSettings`, `cliArg`…), the
 * list it is in, and the directory its `/path` patterns are anchored at (the project its settings
 * file belongs to). `permission.decided.by` is `<source> <behavior> <rule>`.
 */
export interface RuleOrigin {
  source: string;
  behavior: RuleBehavior;
  /** Anchor of `/path` rules; undefined: the working directory. */
  root?: string;
  /** The settings file, for warnings (null: the command line or JSON text). */
  file?: string | null;
}

/**
 * Where a path rule reaches: a base directory (null: the working directory, matched on the path
 * relative to its real path) and gitignore-style globs relative to it.
 */
export interface PathScope {
  base: string | null;
  globs: readonly string[];
}

/**
 * One rule, as Claude Code writes them: a whole tool (`Glob`, `Bash(*)`, `mcp__github`,
 * `mcp__github__*`), a Bash command (`Bash(git status)` exact, `Bash(npm test:*)` and
 * `Bash(npm test *)` prefix on word boundaries, `Bash(git * main)` a wildcard over the command's
 * words), a web host (`WebFetch(domain:example.com)`), a sub-agent (`Task(reviewer)`), or a path
 * for the file tools, gitignore-style (`Read(./secrets/**)`, `Edit(/src/**)`, `Read(//etc/hosts)`,
 * `Read(~/notes/**)`, `Read(.env)` at any depth).
 */
export type PermissionRule = {
  raw: string;
  tool: string;
  origin?: RuleOrigin;
  /** Stands for a deny or ask rule that could not be parsed (ruleSet.ts): an ask of the whole tool. */
  unreadable?: true;
} & (
  | { kind: 'tool' }
  | { kind: 'domain'; domain: string }
  | { kind: 'exact' | 'prefix'; command: string; words: string[] }
  | { kind: 'wildcard'; command: string; pattern: RegExp }
  | { kind: 'agent'; agent: string }
  | {
      kind: 'path';
      /** The glob as written, after its anchor (`./`, `/`, `//`, `~/`) is taken off. */
      pattern: string;
      /** Anchored somewhere other than the working directory. */
      absolute: boolean;
      /** Where an allow rule reaches (strict). */
      scopes: PathScope[];
      /** Where a deny or ask rule reaches: also `/x` read as the absolute path (generous). */
      denyScopes: PathScope[];
    }
);

/** Tools that write files: an `Edit(...)` rule covers each (as in Claude Code). */
export const WRITE_TOOLS: ReadonlySet<string> = new Set(['Edit', 'Write', 'MultiEdit', 'NotebookEdit']);
/** Tools that read files: a `Read(...)` rule covers each (Claude Code applies them "best-effort"). */
export const READ_TOOLS: ReadonlySet<string> = new Set(['Read', 'Glob', 'Grep', 'NotebookRead', 'LS']);

const RULE = /^([A-Za-z][\w.-]*)(?:\((.*)\))?$/s;
const MCP_SERVER_GLOB = /^(mcp__[A-Za-z0-9_.-]+?)__\*$/;

export interface RuleContext {
  /** Anchor of `/path` rules (the settings file's project); default: the working directory. */
  root?: string;
  /** For `~/path` rules; default the process's home. */
  home?: string;
}

export function parseRule(raw: string, ctx: RuleContext = {}, origin?: RuleOrigin): PermissionRule {
  const text = raw.trim();
  const withOrigin = <T extends object>(r: T) => (origin ? { ...r, origin } : r);
  // `mcp__server__*`: every tool of one server, the same as `mcp__server`.
  const server = MCP_SERVER_GLOB.exec(text);
  if (server) return withOrigin({ raw, tool: server[1] as string, kind: 'tool' as const });
  const m = RULE.exec(text);
  if (!m) throw new PermissionRuleError(raw, 'expected ToolName or ToolName(specifier)');
  const tool = m[1] as string;
  const spec = m[2]?.trim();
  if (spec === undefined || spec === '*') return withOrigin({ raw, tool, kind: 'tool' as const });
  if (spec === '')
    throw new PermissionRuleError(raw, 'empty specifier: write the bare tool name for the whole tool');
  if (tool.startsWith('mcp__'))
    throw new PermissionRuleError(raw, 'an MCP rule is mcp__server, mcp__server__* or mcp__server__tool');
  if (tool === 'Bash') return withOrigin(bashRule(raw, tool, spec));
  if (tool === 'WebFetch') {
    if (!spec.startsWith('domain:'))
      throw new PermissionRuleError(raw, 'a WebFetch rule is WebFetch(domain:example.com)');
    const d = parseDomainSpec(spec);
    if (typeof d === 'string') throw new PermissionRuleError(raw, d);
    return withOrigin({ raw, tool, kind: 'domain' as const, domain: d.domain });
  }
  if (tool === 'Task' || tool === 'Agent') {
    return withOrigin({ raw, tool: 'Task', kind: 'agent' as const, agent: spec });
  }
  return withOrigin({ raw, tool, kind: 'path' as const, ...pathRule(raw, spec, ctx) });
}

function bashRule(raw: string, tool: string, spec: string): PermissionRule {
  // `cmd:*` (legacy) and `cmd *` are the same prefix rule: `cmd` and `cmd <anything>`.
  const colon = spec.endsWith(':*');
  const spaced = !colon && /\s\*$/.test(spec);
  const head = colon ? spec.slice(0, -2).trim() : spaced ? spec.slice(0, -1).trim() : spec;
  if (!head) throw new PermissionRuleError(raw, 'empty command before the wildcard');
  if (head.includes('*')) {
    // `*` anywhere else: a wildcard over the command's words, joined by single spaces.
    const command = spec.replace(/\s+/g, ' ');
    const source = command
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    return { raw, tool, kind: 'wildcard', command, pattern: new RegExp(`^${source}$`, 's') };
  }
  const words = ruleWords(head);
  if (typeof words === 'string') throw new PermissionRuleError(raw, words);
  return {
    raw,
    tool,
    kind: colon || spaced ? 'prefix' : 'exact',
    command: words.join(' '),
    words,
  };
}

/**
 * A gitignore-style path rule. Anchors as Claude Code documents them: `//x` the filesystem root,
 * `~/x` home, `/x` the settings file's project, `./x` and `x` the working directory. A pattern
 * without a slash (`.env`, `*.key`) matches at any depth below its anchor; a pattern names a
 * directory's contents too (`secrets` covers `secrets/a`); a trailing `/` names a directory only.
 */
function pathRule(
  raw: string,
  spec: string,
  ctx: RuleContext,
): { pattern: string; absolute: boolean; scopes: PathScope[]; denyScopes: PathScope[] } {
  let base: string | null;
  let rest: string;
  let anchored = true;
  let alsoAbsolute = false;
  if (spec.startsWith('//')) {
    base = '/';
    rest = spec.slice(2);
  } else if (spec === '~' || spec.startsWith('~/')) {
    base = ctx.home ?? os.homedir();
    rest = spec.slice(2);
  } else if (spec.startsWith('/')) {
    base = ctx.root ?? null;
    rest = spec.slice(1);
    // Older reloop (and many hand-written rules) meant the absolute path: deny that too.
    alsoAbsolute = true;
  } else if (spec.startsWith('./')) {
    base = null;
    rest = spec.slice(2);
  } else {
    base = null;
    rest = spec;
    anchored = false;
  }
  // `../x` climbs out of its anchor (`Read(../outside/**)`): a known base moves up; relative to
  // the working directory the `../` stay in the glob, matched on the path relative to cwd.
  let up = '';
  while (rest.startsWith('../')) {
    if (base === null) up += '../';
    else base = path.resolve(base, '..');
    rest = rest.slice(3);
    anchored = true;
  }
  const dirOnly = rest.endsWith('/');
  rest = rest.replace(/\/+$/, '');
  if (rest === '' || rest === '.' || rest === '..') rest = rest === '..' ? '' : '**';
  if (rest.split('/').includes('..') || (rest === '' && up === ''))
    throw new PermissionRuleError(raw, '".." may only lead the path (../x), not follow a name');
  if (rest === '') rest = '**';
  rest = up + rest;
  if (rest.includes('/')) anchored = true;
  const lead = anchored ? '' : '**/';
  const globs = dirOnly ? [`${lead}${rest}/**`] : [`${lead}${rest}`, `${lead}${rest}/**`];
  const scopes: PathScope[] = [{ base, globs }];
  const denyScopes = alsoAbsolute && base !== '/' ? [...scopes, { base: '/', globs }] : scopes;
  return { pattern: rest, absolute: base !== null, scopes, denyScopes };
}

export function parseRules(raws: readonly string[], ctx: RuleContext = {}): PermissionRule[] {
  return raws.map((r) => parseRule(r, ctx));
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
  /** The sub-agent a Task call starts. */
  agent?: string;
}

/** Whether a rule naming `ruleTool` speaks about calls of `tool`. */
export function ruleCovers(ruleTool: string, tool: string): boolean {
  if (ruleTool === tool) return true;
  if (ruleTool === 'Edit' && WRITE_TOOLS.has(tool)) return true;
  if (ruleTool === 'Read' && READ_TOOLS.has(tool)) return true;
  // `mcp__server` (and `mcp__server__*`): every tool of that server.
  if (ruleTool.startsWith('mcp__') && !ruleTool.slice(5).includes('__'))
    return tool.startsWith(`${ruleTool}__`);
  return false;
}

function bashOf(s: RuleSubject): BashAnalysis | undefined {
  if (s.command === undefined) return undefined;
  s.bash ??= analyseBash(s.command);
  return s.bash;
}

const matchers = new Map<string, (p: string) => boolean>();
function globMatcher(glob: string): (p: string) => boolean {
  let m = matchers.get(glob);
  if (!m) {
    // dot: a rule about `**` covers dotfiles too; `..` segments are never matched by `**`.
    m = picomatch(glob, { dot: true });
    if (matchers.size > 4096) matchers.clear();
    matchers.set(glob, m);
  }
  return m;
}

/** `target` relative to `base` with `/` separators, or undefined when it is not below it. */
function below(base: string, target: string): string | undefined {
  const rel = path.relative(base, target);
  if (rel === '' || rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) return undefined;
  return rel.split(path.sep).join('/');
}

function scopeMatches(scope: PathScope, relFromCwd: readonly string[], absolute: readonly string[]): boolean {
  const rels =
    scope.base === null
      ? relFromCwd
      : absolute.flatMap((a) => {
          const r = below(scope.base as string, a);
          return r === undefined ? [] : [r];
        });
  return rels.some((r) => scope.globs.some((g) => globMatcher(g)(r)));
}

/** A glob's special characters taken literally (a directory named `a[1]`). */
function escapeGlob(s: string): string {
  return s.replace(/[*?[\]{}()!@+|\\]/g, '\\$&');
}

/**
 * Scopes as the file tools' roots take them (confinedFs.ts `RootSpec.rules`): a glob relative to
 * the working directory, or an absolute one.
 */
export function scopeGlobs(scopes: readonly PathScope[]): { pattern: string; absolute: boolean }[] {
  return scopes.flatMap((s) =>
    s.globs.map((g) =>
      s.base === null
        ? { pattern: g, absolute: false }
        : { pattern: `${escapeGlob(s.base.replace(/\/+$/, ''))}/${g}`, absolute: true },
    ),
  );
}

function lexicalRelative(p: ResolvedPath, cwd: string): string {
  return path.relative(path.resolve(cwd), p.absolute).split(path.sep).join('/') || '.';
}

/**
 * Whether a path rule covers a path: strictly (allow) on the real path only, so `src/**` cannot
 * reach through a symlink out of cwd; generously (deny, ask) on the path as written too.
 */
export function pathRuleMatches(
  rule: Extract<PermissionRule, { kind: 'path' }>,
  p: ResolvedPath,
  cwd: string | undefined,
  generous: boolean,
): boolean {
  if (!generous) return rule.scopes.some((s) => scopeMatches(s, [p.relative], [p.real]));
  const rels = cwd === undefined ? [p.relative] : [p.relative, lexicalRelative(p, cwd)];
  return rule.denyScopes.some((s) => scopeMatches(s, rels, [p.real, p.absolute]));
}

function wildcardMatches(
  rule: Extract<PermissionRule, { kind: 'wildcard' }>,
  view: CommandView,
  generous: boolean,
) {
  if (view.open && !generous) return false;
  const words = generous ? [baseName(view.words[0] ?? ''), ...view.words.slice(1)] : view.words;
  if (rule.pattern.test(words.join(' '))) return true;
  if (!generous || !view.glob.some(Boolean)) return false;
  // A word bash may expand could become whatever the rule names: for deny, unsure means yes once
  // the program is the rule's (or the rule does not name one).
  const head = rule.command.split(' ')[0] as string;
  return head.includes('*') || view.glob[0] === true || words[0] === head;
}

/**
 * A deny (or ask) rule matches generously: any command the string runs, in any spelling bash
 * accepts (see bashCommand.ts); the path as written or as it really resolves. Better to refuse a
 * call the user meant to allow than the reverse.
 */
export function denyMatches(rule: PermissionRule, s: RuleSubject, cwd: string): boolean {
  if (!ruleCovers(rule.tool, s.tool)) return false;
  switch (rule.kind) {
    case 'tool':
      return true;
    case 'domain':
      return s.host !== undefined && domainMatches(rule.domain, s.host, true);
    case 'agent':
      // A Task call whose agent cannot be read is one the rule may be about.
      return s.agent === undefined || s.agent === rule.agent;
    case 'path':
      return s.path !== undefined && pathRuleMatches(rule, s.path, cwd, true);
    case 'wildcard': {
      const bash = bashOf(s);
      return bash?.denyViews.some((v) => wildcardMatches(rule, v, true)) === true;
    }
    default: {
      const bash = bashOf(s);
      if (!bash) return false;
      return bash.denyViews.some((v) => viewMatches(v, rule.words, rule.kind === 'prefix', true));
    }
  }
}

/**
 * The allow rules that together allow the call, or undefined. An allow rule matches strictly:
 * paths only as they really resolve, and every command a Bash string runs must be allowed by its
 * literal words, with nothing the parser could not account for (see bashCommand.ts).
 */
export function allowMatch(rules: readonly PermissionRule[], s: RuleSubject): PermissionRule[] | undefined {
  const mine = rules.filter((r) => ruleCovers(r.tool, s.tool));
  const whole = mine.find((r) => r.kind === 'tool');
  if (whole) return [whole];
  if (s.tool === 'Task') {
    const hit = mine.find((r) => r.kind === 'agent' && r.agent === s.agent);
    return hit ? [hit] : undefined;
  }
  if (s.host !== undefined) {
    const host = s.host;
    const hit = mine.find((r) => r.kind === 'domain' && domainMatches(r.domain, host, false));
    return hit ? [hit] : undefined;
  }
  if (s.path) {
    const p = s.path;
    const hit = mine.find((r) => r.kind === 'path' && pathRuleMatches(r, p, undefined, false));
    return hit ? [hit] : undefined;
  }
  const bash = bashOf(s);
  if (!bash || bash.unaccounted || bash.allowViews.length === 0) return undefined;
  const used: PermissionRule[] = [];
  for (const view of bash.allowViews) {
    const hit = mine.find((r) => {
      if (r.kind === 'wildcard') return wildcardMatches(r, view, false) && !view.risk;
      return (
        (r.kind === 'exact' || r.kind === 'prefix') &&
        viewMatches(view, r.words, r.kind === 'prefix', false) &&
        // Options that make the program run or change something are vouched for only by a rule
        // that trusts the whole program (programArgs.ts).
        (!view.risk || (view.risk.trustsBareRule && r.words.length === 1))
      );
    });
    if (!hit) return undefined;
    if (!used.includes(hit)) used.push(hit);
  }
  return used;
}

/** Whether a path rule names a protected directory or file itself (`Edit(.git/hooks/**)`), not by `**`. */
export function namesProtected(rule: PermissionRule, name: string): boolean {
  return rule.kind === 'path' && rule.pattern.toLowerCase().split('/').includes(name.toLowerCase());
}
