import { realpathSync } from 'node:fs';
import path from 'node:path';
import {
  type LoadedSettings,
  loadSettings,
  type PermissionModeName,
  permissionSettings,
  type SettingsLayer,
} from '../settings/index.ts';
import type { FileSource } from '../settings/sources.ts';
import { homeDir } from '../settings/sources.ts';
import type { PermissionMode } from '../tools/permissions/modes.ts';
import { createPermissionPolicy, readDeniedPredicate } from '../tools/permissions/policy.ts';
import { cliRuleEntries, compileRuleEntries, type RuleSet } from '../tools/permissions/ruleSet.ts';
import { type PermissionRule, parseRule } from '../tools/permissions/rules.ts';
import { fetchRedirectPolicy } from '../tools/permissions/webFetchRedirects.ts';
import type { CanUseTool } from '../tools/types.ts';

/**
 * What the settings layers and the command line decide about permissions, put together the same
 * way for `reloop run`, a worker's run and the library: every layer's rules (each knowing its
 * source, for `permission.decided.by`), the CLI's own rules (`cliArg`), the mode (the highest
 * source that sets one; managed settings above the command line), the extra directories.
 */
export interface PermissionSetupOptions {
  cwd: string;
  layers: readonly SettingsLayer[];
  /** `--permission-mode` (undefined: not given, a settings `defaultMode` may set it). */
  mode?: PermissionMode;
  /** The CLI's rules (`--allow`, `--allowedTools`…), source `cliArg`; a bad one throws. */
  allow?: readonly string[];
  ask?: readonly string[];
  deny?: readonly string[];
  /** `--add-dir`: more directories the file tools may reach. */
  addDirs?: readonly string[];
  /** Directories a writing tool must not change without a rule (the CLI's store). */
  protect?: readonly string[];
  /** For `~/` rules and `additionalDirectories`; default homeDir() (RELOOP_HOME in tests). */
  home?: string;
}

export interface ResolvedPermissions {
  mode: PermissionMode;
  /** Where the mode came from: `cliArg`, `projectSettings`…, or `default`. */
  modeSource: string;
  canUseTool: CanUseTool;
  /** Every rule, command line included: the tools' outside-cwd reach and WebFetch redirects use them. */
  rules: RuleSet;
  additionalDirectories: string[];
  /**
   * Where the file tools may open outside cwd (`BuiltinToolOptions.allowOutsideCwd`): the allow
   * rules' paths and the additional directories (the policy has checked each call first).
   */
  toolReach: PermissionRule[];
  /** Every rule in force, as the recorded setup keeps them (`run.setup.permissions.rules`). */
  facts: { source: string; behavior: 'allow' | 'ask' | 'deny'; rule: string }[];
  /** Rules that could not be read, each naming its file and the rule. */
  warnings: string[];
  redirectAllowed: (url: URL) => boolean;
  /**
   * For the built-in tools' `readDenied`: the paths Grep and Glob skip while walking a tree
   * (a Read deny or ask rule covers them); undefined when no such rule is in force.
   */
  readDenied?: (absPath: string) => boolean;
}

export class PermissionSetupError extends Error {
  readonly code = 'PERMISSION_MODE_DISABLED';
  constructor(message: string) {
    super(message);
    this.name = 'PermissionSetupError';
  }
}

export function permissionSetup(opts: PermissionSetupOptions): ResolvedPermissions {
  const home = opts.home ?? homeDir();
  const ps = permissionSettings(opts.layers, home);
  // The command line's rules are parsed strictly (a typo is bad usage), then join the layers'.
  const cli = cliRuleEntries({ allow: opts.allow ?? [], ask: opts.ask ?? [], deny: opts.deny ?? [] });
  for (const e of cli) parseRule(e.rule);
  const entries = [...ps.rules, ...cli];
  const rules = compileRuleEntries(entries, { cwd: opts.cwd, home });
  const { mode, source } = resolveMode(opts.layers, opts.mode, ps.defaultMode);
  if (mode === 'bypassPermissions' && ps.bypassDisabledBy) {
    const by = ps.bypassDisabledBy;
    throw new PermissionSetupError(
      `bypassPermissions is disabled by ${by.file ?? by.source} (disableBypassPermissionsMode: "disable")`,
    );
  }
  const additionalDirectories = [
    ...ps.additionalDirectories.map((d) => d.dir),
    ...(opts.addDirs ?? []).map((d) => resolveDir(opts.cwd, d, home)),
  ];
  const canUseTool = createPermissionPolicy({
    mode,
    rules,
    cwd: opts.cwd,
    ...(opts.protect ? { protect: opts.protect } : {}),
    ...(additionalDirectories.length ? { additionalDirectories } : {}),
  });
  const reach = additionalDirectories.flatMap((d) => {
    const base = realOr(d);
    return (['Read', 'Edit'] as const).map(
      (tool): PermissionRule => ({
        raw: `${tool}(//${base.replace(/^\/+/, '')}/**)`,
        tool,
        kind: 'path',
        pattern: '**',
        absolute: true,
        scopes: [{ base, globs: ['**'] }],
        denyScopes: [{ base, globs: ['**'] }],
      }),
    );
  });
  const readDenied = readDeniedPredicate(rules, opts.cwd);
  return {
    mode,
    modeSource: source,
    ...(readDenied ? { readDenied } : {}),
    toolReach: [...rules.allow, ...reach],
    facts: entries.map((e) => ({ source: e.source, behavior: e.behavior, rule: e.rule })),
    canUseTool,
    rules,
    additionalDirectories,
    warnings: rules.warnings,
    redirectAllowed: fetchRedirectPolicy(rules, [], opts.cwd),
  };
}

/** The mode: managed settings over the command line over the other layers' `defaultMode`. */
function resolveMode(
  layers: readonly SettingsLayer[],
  flag: PermissionMode | undefined,
  fromLayers: { mode: PermissionModeName; source: string } | undefined,
): { mode: PermissionMode; source: string } {
  const managed = [...layers].reverse().find((l) => {
    const p = l.json.permissions as { defaultMode?: unknown } | undefined;
    return l.source === 'policySettings' && typeof p?.defaultMode === 'string';
  });
  if (managed) {
    const p = managed.json.permissions as { defaultMode: PermissionMode };
    return { mode: p.defaultMode, source: 'policySettings' };
  }
  if (flag) return { mode: flag, source: 'cliArg' };
  if (fromLayers) return { mode: fromLayers.mode, source: fromLayers.source };
  return { mode: 'default', source: 'default' };
}

function resolveDir(cwd: string, d: string, home: string): string {
  const expanded = d === '~' ? home : d.startsWith('~/') ? path.join(home, d.slice(2)) : d;
  return path.resolve(cwd, expanded);
}

/** Reads the settings layers of a run (see loadSettings), with the user's home injectable. */
export async function runSettingsLayers(opts: {
  cwd: string;
  sources: readonly FileSource[];
  flagSettings?: string;
  userDir?: string;
  managedFile?: string | null;
}): Promise<LoadedSettings> {
  return loadSettings({
    cwd: opts.cwd,
    sources: opts.sources,
    ...(opts.flagSettings !== undefined ? { flagSettings: opts.flagSettings } : {}),
    ...(opts.userDir !== undefined ? { userDir: opts.userDir } : {}),
    ...(opts.managedFile !== undefined ? { managedFile: opts.managedFile } : {}),
  });
}

function realOr(d: string): string {
  try {
    return realpathSync(d);
  } catch {
    return d;
  }
}

export class ToolListError extends Error {
  readonly code = 'TOOLS_INVALID';
  constructor(message: string) {
    super(message);
    this.name = 'ToolListError';
  }
}

/**
 * `--allowedTools` / `--disallowedTools` / `--tools` values as Claude Code takes them: rules (or
 * tool names) separated by commas or spaces, each value repeatable; a space inside parentheses
 * belongs to the rule (`"Bash(git log:*) Read"` is two rules).
 */
export function splitToolList(values: readonly string[]): string[] {
  const out: string[] = [];
  for (const value of values) {
    let depth = 0;
    let word = '';
    for (const c of value) {
      if (c === '(') depth++;
      if (c === ')') depth = Math.max(0, depth - 1);
      if (depth === 0 && (c === ',' || /\s/.test(c))) {
        if (word) out.push(word);
        word = '';
      } else word += c;
    }
    if (word) out.push(word);
  }
  return out;
}

/**
 * The built-in tools a run offers: `--tools` names which exist at all (`""` none, `default` all;
 * a name reloop does not have is bad usage), and a whole-tool deny rule (`Bash`, from any source)
 * takes that tool out of the request, as in Claude Code — its calls would all be denied anyway.
 */
export function offeredTools<T extends { name: string }>(
  tools: readonly T[],
  toolsFlag: string | undefined,
  denied: readonly { tool: string; kind: string; unreadable?: true }[],
  /** The names `--tools` may give (default: these tools'). */
  knownNames?: readonly string[],
): T[] {
  let kept = [...tools];
  if (toolsFlag !== undefined && toolsFlag.trim() !== 'default') {
    const names = splitToolList([toolsFlag]);
    const known = new Set(knownNames ?? tools.map((t) => t.name));
    const unknown = names.filter((n) => !known.has(n));
    if (unknown.length)
      throw new ToolListError(
        `--tools: no built-in tool ${unknown.map((n) => JSON.stringify(n)).join(', ')} (there are: ${[...known].join(', ')})`,
      );
    kept = kept.filter((t) => names.includes(t.name));
  }
  const gone = new Set(denied.filter((r) => r.kind === 'tool' && !r.unreadable).map((r) => r.tool));
  return kept.filter((t) => !gone.has(t.name));
}
