import { realpathSync } from 'node:fs';
import path from 'node:path';
import { printable } from '../../lib/printable.ts';
import { checkGlobPattern } from '../globPatterns.ts';
import { isWithin, type ResolvedPath, resolveInCwd, rootRealPath, toPosix } from '../paths.ts';
import { projectHooksDir, protectedWrite, WrittenPaths } from '../protectedPaths.ts';
import type { CanUseTool, PermissionRequest, PermissionResult } from '../types.ts';
import { analyseBash, type BashAnalysis } from './bashCommand.ts';
import { modeDecision, type PermissionMode } from './modes.ts';
import { cliRuleEntries, compileRuleEntries, isUnreadable, type RuleSet, ruleBy } from './ruleSet.ts';
import {
  allowMatch,
  denyMatches,
  namesProtected,
  type PermissionRule,
  parseRule,
  READ_TOOLS,
  type RuleSubject,
  ruleCovers,
} from './rules.ts';
import { fetchHost } from './webFetchDomains.ts';

export interface PermissionPolicyOptions {
  mode: PermissionMode;
  /**
   * Rule strings such as `Bash(npm test:*)`, `Edit(src/**)`, `Glob`, of source `cliArg`. Parsed
   * up front: a bad one throws (PermissionRuleError).
   */
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  /** Rules with their sources (settings layers; compileRuleEntries), beside the strings above. */
  rules?: RuleSet;
  cwd: string;
  /**
   * More directories a tool that changes files must not change without a rule naming them, like
   * the built-in protected paths (src/tools/protectedPaths.ts): the CLI passes its store.
   */
  protect?: readonly string[];
  /**
   * More directories the file tools may reach besides cwd (`additionalDirectories`, `--add-dir`):
   * inside them the rules and the mode decide as inside cwd.
   */
  additionalDirectories?: readonly string[];
}

function field(input: unknown, key: string): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const v = (input as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** The path a call touches, by the Claude Code field names; Glob and Grep default to cwd. */
function pathOf(tool: string, input: unknown): string | undefined {
  const given = field(input, 'file_path') ?? field(input, 'notebook_path') ?? field(input, 'path');
  if (given !== undefined) return given;
  return tool === 'Glob' || tool === 'Grep' ? '.' : undefined;
}

/** Glob patterns in the input (Glob's `pattern`, Grep's `glob`): they choose paths as much as `path` does. */
function patternsOf(tool: string, input: unknown): { field: string; pattern: string }[] {
  const out: { field: string; pattern: string }[] = [];
  const pattern = tool === 'Glob' ? field(input, 'pattern') : undefined;
  if (pattern !== undefined) out.push({ field: 'pattern', pattern });
  const glob = field(input, 'glob');
  if (glob !== undefined) out.push({ field: 'glob', pattern: glob });
  return out;
}

/** For messages: clipped, and printable (a model's command may carry terminal escapes). */
function short(s: string): string {
  return printable(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}

/**
 * Decides allow / deny / ask for one call. Order: deny rules; patterns that could climb out of
 * cwd; a Bash command that could hide a command from the deny rules is asked; allow rules (never
 * for a tool that changes things in plan mode); "outside cwd is denied"; the mode.
 * Only an explicit allow rule opens a path outside cwd: even bypassPermissions stays inside the
 * working directory. A path that cannot even be resolved (ENAMETOOLONG, EACCES…) is denied for
 * that call alone.
 */
export function createPermissionPolicy(opts: PermissionPolicyOptions): CanUseTool {
  const { allow, ask, deny } = policyRules(opts);
  const bashDenyRules = [...deny, ...ask].some((r) => r.tool === 'Bash' && r.kind !== 'tool');
  let protect: Promise<string[]> | undefined;
  const written = new WrittenPaths();
  let extraDirs: Promise<string[]> | undefined;
  const extraReal = () => {
    extraDirs ??= Promise.all((opts.additionalDirectories ?? []).map((d) => rootRealPath(d).catch(() => d)));
    return extraDirs;
  };
  const protectedReal = () => {
    // The store, and a hooks directory of the tree set by core.hooksPath (protectedPaths.ts).
    protect ??= Promise.all([
      ...(opts.protect ?? []).map((d) => rootRealPath(d).catch(() => d)),
      projectHooksDir(opts.cwd),
    ]).then((dirs) => dirs.filter((d): d is string => d !== undefined));
    return protect;
  };
  const decide = async (req: PermissionRequest): Promise<PermissionResult> => {
    const tool = req.tool.name;
    const subject: RuleSubject = { tool };
    let resolved: (ResolvedPath & { extraRoot?: string }) | undefined;
    if (tool === 'Bash') {
      subject.command = field(req.input, 'command');
    } else if (tool === 'Task') {
      subject.agent = field(req.input, 'subagent_type');
    } else if (tool === 'WebFetch') {
      // Domain rules see the host; a url that does not parse has none, and no allow rule matches it.
      subject.host = fetchHost(req.input) ?? '';
    } else {
      const given = pathOf(tool, req.input);
      if (given !== undefined) {
        try {
          resolved = subject.path = await resolveInCwd(opts.cwd, given);
          if (!resolved.inside && opts.additionalDirectories?.length) {
            const real = resolved.real;
            const home = (await extraReal()).find((d) => isWithin(d, real));
            if (home) {
              resolved = { ...resolved, inside: true, extraRoot: home };
              subject.path = resolved;
            }
          }
        } catch (e) {
          const code = (e as { code?: unknown })?.code;
          return {
            behavior: 'deny',
            message: `Cannot check the path ${JSON.stringify(short(given))}: ${code ? String(code) : (e as Error)?.message}.`,
            by: 'path:unresolvable',
          };
        }
      }
    }

    // deny, then ask, then allow: the first list with a match decides (as in Claude Code).
    const denied = deny.find((r) => denyMatches(r, subject, opts.cwd));
    if (denied) {
      return {
        behavior: 'deny',
        message: `${tool} is denied by the rule ${denied.raw}${where(denied)}.`,
        by: ruleBy(denied, 'deny'),
      };
    }
    for (const { field: name, pattern } of patternsOf(tool, req.input)) {
      const verdict = checkGlobPattern(pattern);
      if (!verdict.ok) {
        return {
          behavior: 'deny',
          message: `The ${name} ${JSON.stringify(short(pattern))} could reach outside the working directory: ${verdict.why}.`,
          by: 'path:pattern-escapes',
        };
      }
    }
    // Plan mode is read-only whatever the rules say: no allow rule (or ask) for a tool that changes things.
    const planBlocks = opts.mode === 'plan' && !req.tool.isReadOnly;
    const asked = planBlocks ? undefined : ask.find((r) => denyMatches(r, subject, opts.cwd));
    if (asked) {
      const what = describe(req.input, subject, resolved);
      const why = isUnreadable(asked)
        ? ` The rule ${asked.raw}${where(asked)} could not be read, so every ${tool} call is asked.`
        : ` The rule ${asked.raw}${where(asked)} asks for it.`;
      return {
        behavior: 'ask',
        message: `Allow ${tool}${what === undefined ? '' : `: ${what}`}?${why}`,
        by: ruleBy(asked, 'ask'),
      };
    }
    if (!planBlocks && tool === 'Bash' && bashDenyRules && subject.command !== undefined) {
      const blind = analysed(subject).denyBlind;
      if (blind) {
        return {
          behavior: 'ask',
          message: `Allow Bash: ${short(subject.command)}? The deny rules cannot see every command it runs (${blind}).`,
          by: 'rule:deny-unverifiable',
        };
      }
    }
    // A change under .git, .claude, .npmrc…, or one that would make a folder a git repository:
    // only a rule that names it allows it (protectedPaths.ts).
    const changes = !req.tool.isReadOnly && resolved?.inside ? resolved : undefined;
    // In an added directory, protected names are those of that directory (its .git, .claude…).
    const changeRoot = changes?.extraRoot ?? (changes ? await rootRealPath(opts.cwd) : undefined);
    const changeRel = changes?.extraRoot
      ? toPosix(path.relative(changes.extraRoot, changes.real)) || '.'
      : changes?.relative;
    if (changes && !changes.extraRoot) written.add(changes.relative);
    const guarded =
      changes && changeRoot !== undefined && changeRel !== undefined
        ? await protectedWrite(changeRoot, changeRel, changes.real, await protectedReal(), written)
        : undefined;
    let allowed = planBlocks ? undefined : allowMatch(allow, subject);
    if (allowed && guarded && !allowed.every((r) => namesProtected(r, guarded.name))) allowed = undefined;
    if (allowed) return { behavior: 'allow', by: allowed.map((r) => ruleBy(r, 'allow')).join(', ') };
    if (resolved && !resolved.inside) {
      return {
        behavior: 'deny',
        message: `${resolved.absolute} is outside the working directory ${opts.cwd}; no allow rule covers it.`,
        by: 'path:outside-cwd',
      };
    }
    if (guarded && !planBlocks) {
      return {
        behavior: 'ask',
        message: `Allow ${tool}: ${resolved?.relative}? ${guarded.why}`,
        by: 'path:protected',
      };
    }
    const decided = modeDecision(opts.mode, req.tool);
    if (decided.behavior !== 'ask') return decided;
    // The person asked needs to see what would run or change, not only which tool — and for a
    // command, why no rule could vouch for it (an option that runs a program, a redirection…).
    const what = describe(req.input, subject, resolved);
    const unvouched =
      subject.bash && (subject.bash.unaccounted ?? subject.bash.allowViews.find((v) => v.risk)?.risk?.why);
    const because = unvouched ? ` No rule can vouch for it: ${short(unvouched)}.` : '';
    return {
      ...decided,
      message: what === undefined ? decided.message : `Allow ${tool}: ${what}?${because}`,
    };
  };
  if (opts.mode !== 'dontAsk') return decide;
  // dontAsk: nobody is asked; what no rule allows is denied (an ask rule's call too).
  return async (req) => {
    const r = await decide(req);
    if (r.behavior !== 'ask') return r;
    const asked = r.message ? ` ${r.message}` : '';
    return {
      behavior: 'deny',
      message: `${req.tool.name} needs a rule that allows it: the permission mode is dontAsk.${asked}`,
      by: r.by ?? 'mode:dontAsk',
    };
  };
}

function analysed(s: RuleSubject): BashAnalysis {
  s.bash ??= analyseBash(s.command ?? '');
  return s.bash;
}

/** What a call touches, for the question a person is asked. */
function describe(
  input: unknown,
  subject: RuleSubject,
  resolved: ResolvedPath | undefined,
): string | undefined {
  if (subject.command !== undefined) return short(subject.command);
  if (subject.host !== undefined) return short(field(input, 'url') ?? subject.host);
  if (subject.agent !== undefined) return short(subject.agent);
  return resolved?.relative;
}

/** ` (in <file>)` for a rule of a settings file, for messages. */
function where(rule: PermissionRule): string {
  return rule.origin?.file ? ` (${rule.origin.file})` : '';
}

/** The policy's rules: the command-line strings (a bad one throws) and the compiled entries. */
function policyRules(opts: PermissionPolicyOptions): Omit<RuleSet, 'warnings'> {
  const strict = (behavior: 'allow' | 'ask' | 'deny', raws: readonly string[] | undefined) =>
    (raws ?? []).map((raw) => parseRule(raw, {}, { source: 'cliArg', behavior, file: null }));
  return {
    allow: [...strict('allow', opts.allow), ...(opts.rules?.allow ?? [])],
    ask: [...strict('ask', opts.ask), ...(opts.rules?.ask ?? [])],
    deny: [...strict('deny', opts.deny), ...(opts.rules?.deny ?? [])],
  };
}

/**
 * Whether a path a reading tool meets while walking a tree (Grep's files, Glob's listing) is
 * covered by a deny or an ask path rule about reading (`Read(./secrets/**)`, or a Grep / Glob
 * one): the policy checked only the call's `path`, so a search over `.` would otherwise open
 * what the rule forbids. Ask rules withhold too (fail closed: nobody is asked per file). Matched
 * as deny rules match (generously: the path as given and as it really is), synchronously, for the
 * tools' `readDenied` option.
 */
export function readDeniedPredicate(
  rules: Pick<RuleSet, 'deny' | 'ask'>,
  cwd: string,
): ((absPath: string) => boolean) | undefined {
  const reading = [...rules.deny, ...rules.ask].filter(
    (r) => r.kind === 'path' && [...READ_TOOLS].some((t) => ruleCovers(r.tool, t)),
  );
  if (reading.length === 0) return undefined;
  let realCwd: string;
  try {
    realCwd = realpathSync(cwd);
  } catch {
    realCwd = path.resolve(cwd);
  }
  return (absPath) => {
    const absolute = path.resolve(cwd, absPath);
    const rel = path.relative(realCwd, absolute);
    const inside = rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
    const subject: RuleSubject = {
      tool: 'Read',
      path: { absolute, real: absolute, relative: toPosix(rel) || '.', inside },
    };
    return reading.some((r) => denyMatches({ ...r, tool: 'Read' }, subject, cwd));
  };
}

export { cliRuleEntries, compileRuleEntries };
