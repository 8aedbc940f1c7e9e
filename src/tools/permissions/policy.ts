import { type ResolvedPath, resolveInCwd } from '../paths.ts';
import type { CanUseTool, PermissionResult } from '../types.ts';
import { modeDecision, type PermissionMode } from './modes.ts';
import { allowMatch, denyMatches, parseRules, type RuleSubject } from './rules.ts';

export interface PermissionPolicyOptions {
  mode: PermissionMode;
  /** Rule strings such as `Bash(npm test:*)`, `Edit(src/**)`, `Glob`. Parsed up front: a bad one throws. */
  allow?: readonly string[];
  deny?: readonly string[];
  cwd: string;
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

/**
 * Decides allow / deny / ask for one call. Order: deny rules, then allow rules, then "outside cwd
 * is denied", then the mode. Rules win over the mode in both directions, and only an explicit
 * allow rule opens a path outside cwd: even bypassPermissions stays inside the working directory.
 */
export function createPermissionPolicy(opts: PermissionPolicyOptions): CanUseTool {
  const allow = parseRules(opts.allow ?? []);
  const deny = parseRules(opts.deny ?? []);
  return async (req): Promise<PermissionResult> => {
    const tool = req.tool.name;
    const subject: RuleSubject = { tool };
    let resolved: ResolvedPath | undefined;
    if (tool === 'Bash') {
      subject.command = field(req.input, 'command');
    } else {
      const given = pathOf(tool, req.input);
      if (given !== undefined) resolved = subject.path = await resolveInCwd(opts.cwd, given);
    }

    const denied = deny.find((r) => denyMatches(r, subject, opts.cwd));
    if (denied) {
      return {
        behavior: 'deny',
        message: `${tool} is denied by the rule ${denied.raw}.`,
        by: `rule:${denied.raw}`,
      };
    }
    const allowed = allowMatch(allow, subject);
    if (allowed) return { behavior: 'allow', by: allowed.map((r) => `rule:${r.raw}`).join(',') };
    if (resolved && !resolved.inside) {
      return {
        behavior: 'deny',
        message: `${resolved.absolute} is outside the working directory ${opts.cwd}; no allow rule covers it.`,
        by: 'path:outside-cwd',
      };
    }
    const decided = modeDecision(opts.mode, req.tool);
    if (decided.behavior !== 'ask') return decided;
    // The person asked needs to see what would run or change, not only which tool.
    const what = subject.command ?? resolved?.relative;
    return { ...decided, message: what === undefined ? decided.message : `Allow ${tool}: ${what}?` };
  };
}
