import type { RunOptions } from './commands/run.ts';
import { err, UsageError } from './io.ts';

/**
 * What `reloop run` reads about permissions before it starts: the settings layers
 * (`--setting-sources`, default user, project and local; managed settings always; `--settings`),
 * and the command line's own rules, mode and directories. Bad settings, a bad `--allow` /
 * `--deny` rule or a mode the settings forbid is bad usage (exit 2); a settings rule that cannot
 * be read is a warning naming its file (the policy asks instead of it, or drops an allow).
 */
export async function runPermissions(opts: RunOptions, cwd: string, protect: readonly string[]) {
  const { parseSettingSources, SettingSourcesError, SettingsError } = await import('../settings/index.ts');
  const { runSettingsLayers, permissionSetup, PermissionSetupError, splitToolList } = await import(
    '../runtime/permissionSetup.ts'
  );
  const { PermissionRuleError, PermissionModeSchema } = await import('../tools/permissions/index.ts');
  let sources: ReturnType<typeof parseSettingSources>;
  try {
    sources = parseSettingSources(opts.settingSources ?? 'user,project,local');
  } catch (e) {
    if (e instanceof SettingSourcesError) throw new UsageError(e.message, e.code);
    throw e;
  }
  let loaded: Awaited<ReturnType<typeof runSettingsLayers>>;
  try {
    loaded = await runSettingsLayers({
      cwd,
      sources,
      ...(opts.settings !== undefined ? { flagSettings: opts.settings } : {}),
    });
  } catch (e) {
    if (e instanceof SettingsError) throw new UsageError(e.message, e.code);
    throw e;
  }
  for (const w of loaded.warnings) err(`warning: ${w}`);
  let mode: ReturnType<typeof PermissionModeSchema.parse> | undefined;
  if (opts.permissionMode !== undefined) {
    const parsed = PermissionModeSchema.safeParse(opts.permissionMode);
    if (!parsed.success)
      throw new UsageError(`--permission-mode must be one of ${PermissionModeSchema.options.join(', ')}`);
    mode = parsed.data;
  }
  const setupWith = (moreAllow: readonly string[]) =>
    permissionSetup({
      cwd,
      layers: loaded.layers,
      ...(mode ? { mode } : {}),
      // --allowedTools / --disallowedTools are Claude Code's names for --allow / --deny.
      allow: [...(opts.allow ?? []), ...splitToolList(opts.allowedTools ?? []), ...moreAllow],
      deny: [...(opts.deny ?? []), ...splitToolList(opts.disallowedTools ?? [])],
      addDirs: opts.addDir ?? [],
      protect,
    });
  try {
    const setup = setupWith([]);
    for (const w of setup.warnings) err(`warning: ${w}`);
    /** The same policy with more allow rules of source `cliArg` (a chat's "don't ask again"). */
    const policyWith = (moreAllow: readonly string[]) => setupWith(moreAllow).canUseTool;
    return { layers: loaded.layers, setup, policyWith };
  } catch (e) {
    if (e instanceof PermissionRuleError || e instanceof PermissionSetupError)
      throw new UsageError(e.message, e.code);
    throw e;
  }
}

/** `--tools`, as bad usage when it names a tool reloop does not have. */
export async function offeredTools<T extends { name: string }>(
  tools: readonly T[],
  toolsFlag: string | undefined,
  denied: readonly { tool: string; kind: string; unreadable?: true }[],
  known?: readonly string[],
): Promise<T[]> {
  const { offeredTools: offered, ToolListError } = await import('../runtime/permissionSetup.ts');
  try {
    return offered(tools, toolsFlag, denied, known);
  } catch (e) {
    if (e instanceof ToolListError) throw new UsageError(e.message, e.code);
    throw e;
  }
}
