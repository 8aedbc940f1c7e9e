import path from 'node:path';
import { hooksFromLayers, mergeHooks } from '../hooks/config.ts';
import type { FileSource } from '../settings/sources.ts';
import type { PermissionMode } from '../tools/permissions/modes.ts';
import type { CanUseTool } from '../tools/types.ts';
import { permissionSetup, runSettingsLayers } from './permissionSetup.ts';

/** Marks options whose settings files were read already (a sub-agent's copy keeps the mark). */
const APPLIED = Symbol('reloop.settingSourcesApplied');

interface SettingsOptions {
  settingSources?: readonly FileSource[];
  /** The home the user's settings (`<home>/.claude/settings.json`) and `~/` rules come from. */
  settingsHome?: string;
  /** The managed settings file; default `/etc/claude-code/managed-settings.json` (null: none). */
  managedSettingsFile?: string | null;
  permissionMode?: PermissionMode;
  onSettingsWarning?: (warning: string) => void;
  cwd?: string;
  canUseTool?: CanUseTool;
  hooks?: Parameters<typeof mergeHooks>[0];
  permissions?: {
    mode?: string;
    rules?: readonly { source: string; behavior: 'allow' | 'ask' | 'deny'; rule: string }[];
  };
}

/**
 * The library's `settingSources` (the Claude Agent SDK's; default none): the settings files named
 * (and the managed file) are read once, as `reloop run` reads them, and their permission rules
 * and hooks apply to the session. The rules decide first; a `canUseTool` given beside them answers
 * what they would ask, as the SDK calls it for a permission prompt. Bad settings throw
 * SettingsError; a rule that cannot be read is a warning (`onSettingsWarning`) and fails closed.
 */
export async function applySettingSources<T extends SettingsOptions>(opts: T): Promise<T> {
  if (!opts.settingSources?.length || (opts as Record<symbol, unknown>)[APPLIED]) return opts;
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const home = opts.settingsHome;
  const loaded = await runSettingsLayers({
    cwd,
    sources: opts.settingSources,
    ...(home !== undefined ? { userDir: path.join(home, '.claude') } : {}),
    ...(opts.managedSettingsFile !== undefined ? { managedFile: opts.managedSettingsFile } : {}),
  });
  const setup = permissionSetup({
    cwd,
    layers: loaded.layers,
    ...(opts.permissionMode ? { mode: opts.permissionMode } : {}),
    ...(home !== undefined ? { home } : {}),
  });
  const hooks = hooksFromLayers(loaded.layers);
  for (const w of [...loaded.warnings, ...setup.warnings, ...hooks.warnings]) opts.onSettingsWarning?.(w);
  const given = opts.canUseTool;
  const canUseTool: CanUseTool = given
    ? async (req) => {
        const r = await setup.canUseTool(req);
        return r.behavior === 'ask' ? given(req) : r;
      }
    : setup.canUseTool;
  return {
    ...opts,
    canUseTool,
    hooks: mergeHooks(hooks.hooks, opts.hooks),
    permissions: opts.permissions ?? { mode: setup.mode, rules: setup.facts },
    [APPLIED]: true,
  };
}
