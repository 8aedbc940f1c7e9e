import path from 'node:path';
import type { SettingsLayer } from './load.ts';
import { PERMISSION_MODES } from './schema.ts';
import type { SettingSource } from './sources.ts';

export type PermissionModeName = (typeof PERMISSION_MODES)[number];
export type RuleBehavior = 'allow' | 'ask' | 'deny';

/** One rule as a settings layer states it: plain data the permission policy compiles. */
export interface PermissionRuleEntry {
  source: SettingSource;
  behavior: RuleBehavior;
  /** The rule text as written (`Read(./secrets/**)`). */
  rule: string;
  /** Where its `/path` patterns are anchored (the project the file belongs to). */
  root: string;
  file: string | null;
}

export interface PermissionSettings {
  /** Every layer's rules, lowest source first (order does not decide: deny > ask > allow). */
  rules: PermissionRuleEntry[];
  /** The highest source's `defaultMode`, if any sets one. */
  defaultMode?: { mode: PermissionModeName; source: SettingSource; file: string | null };
  /** `additionalDirectories` of every layer, absolute (relative ones from the layer's root). */
  additionalDirectories: { dir: string; source: SettingSource }[];
  /** A source that says `disableBypassPermissionsMode: "disable"` (any source counts: fail closed). */
  bypassDisabledBy?: { source: SettingSource; file: string | null };
}

type Permissions = {
  allow?: string[];
  ask?: string[];
  deny?: string[];
  defaultMode?: PermissionModeName;
  additionalDirectories?: string[];
  disableBypassPermissionsMode?: 'disable';
};

function permissionsOf(layer: SettingsLayer): Permissions {
  const p = layer.json.permissions;
  return typeof p === 'object' && p !== null ? (p as Permissions) : {};
}

/** What the layers say about permissions, checked already by loadSettings. */
export function permissionSettings(layers: readonly SettingsLayer[], home: string): PermissionSettings {
  const out: PermissionSettings = { rules: [], additionalDirectories: [] };
  for (const layer of layers) {
    const p = permissionsOf(layer);
    for (const behavior of ['allow', 'ask', 'deny'] as const) {
      for (const rule of p[behavior] ?? []) {
        out.rules.push({ source: layer.source, behavior, rule, root: layer.root, file: layer.file });
      }
    }
    if (p.defaultMode !== undefined)
      out.defaultMode = { mode: p.defaultMode, source: layer.source, file: layer.file };
    for (const d of p.additionalDirectories ?? []) {
      const expanded = d === '~' ? home : d.startsWith('~/') ? path.join(home, d.slice(2)) : d;
      out.additionalDirectories.push({ dir: path.resolve(layer.root, expanded), source: layer.source });
    }
    if (p.disableBypassPermissionsMode === 'disable' && !out.bypassDisabledBy)
      out.bypassDisabledBy = { source: layer.source, file: layer.file };
  }
  return out;
}

/** The highest layer that sets a top-level key, with its value (`model`, `enableAllProjectMcpServers`…). */
export function highestSetting(
  layers: readonly SettingsLayer[],
  key: string,
): { value: unknown; layer: SettingsLayer } | undefined {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    if (Object.hasOwn(layer.json, key) && layer.json[key] !== undefined)
      return { value: layer.json[key], layer };
  }
  return undefined;
}

/** Where a layer is, for messages: its file, or what stands in for one. */
export function layerLabel(layer: Pick<SettingsLayer, 'source' | 'file'>): string {
  if (layer.file) return layer.file;
  return layer.source === 'cliArg' ? 'the command line' : '--settings';
}

export { PERMISSION_MODES };
