import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, messageOf } from '../lib/errors.ts';
import { checkSettings, jsonErrorWhere, SettingsError, UNSUPPORTED_KEYS } from './schema.ts';
import {
  type FileSource,
  managedSettingsFile,
  type SettingSource,
  settingSourceOf,
  userClaudeDir,
} from './sources.ts';

/**
 * One source of settings, as read: which source, the file (null for JSON text or the CLI's own
 * flags), the directory its `/path` rules are anchored at, and the object itself. Consumers (the
 * permission rules, hooks, the MCP approval) read layers in order, so each can say which source
 * decided.
 */
export interface SettingsLayer {
  source: SettingSource;
  file: string | null;
  root: string;
  json: Record<string, unknown>;
}

export interface LoadedSettings {
  /** Lowest precedence first: user, project, local, flag, cliArg, policy. */
  layers: SettingsLayer[];
  /** Valid but not supported here; each names its file. */
  warnings: string[];
}

export interface LoadSettingsOptions {
  /** The project: `<cwd>/.claude/settings.json` and `settings.local.json` are its files. */
  cwd: string;
  /** Which files are read (`--setting-sources`). Default none, as the Claude Agent SDK does. */
  sources?: readonly FileSource[];
  /** `--settings`: a file path (relative to the process's directory) or JSON text. */
  flagSettings?: string;
  /** The CLI's own flags, as a settings object (`{ permissions: { allow: [...] } }`). */
  cliArg?: Record<string, unknown>;
  /** The user's Claude directory (`~/.claude`); default from the environment (userClaudeDir). */
  userDir?: string;
  /** The managed settings file (null: none); default `/etc/claude-code/managed-settings.json`. */
  managedFile?: string | null;
}

/** Settings files are small; a larger one is refused rather than read into memory. */
export const MAX_SETTINGS_BYTES = 4 * 1024 * 1024;

/**
 * Reads the settings layers a run has, as Claude Code resolves them. A missing file is no layer;
 * a file that is not JSON, or whose known keys have the wrong type, is a SettingsError naming it
 * (and the field): the run must not start on half its rules.
 */
export async function loadSettings(opts: LoadSettingsOptions): Promise<LoadedSettings> {
  const cwd = path.resolve(opts.cwd);
  const sources = opts.sources ?? [];
  const warnings: string[] = [];
  const layers: SettingsLayer[] = [];
  const add = (layer: SettingsLayer | undefined) => {
    if (!layer) return;
    warnings.push(...unsupportedKeys(layer));
    layers.push(layer);
  };
  const projectDir = path.join(cwd, '.claude');
  const files: Record<FileSource, string> = {
    user: path.join(opts.userDir ?? userClaudeDir(), 'settings.json'),
    project: path.join(projectDir, 'settings.json'),
    local: path.join(projectDir, 'settings.local.json'),
  };
  for (const s of ['user', 'project', 'local'] as const) {
    if (!sources.includes(s)) continue;
    add(await readLayer(settingSourceOf(s), files[s], { optional: true }));
  }
  if (opts.flagSettings !== undefined) add(await flagLayer(opts.flagSettings, cwd));
  if (opts.cliArg) add({ source: 'cliArg', file: null, root: cwd, json: opts.cliArg });
  const managed = opts.managedFile === undefined ? managedSettingsFile() : opts.managedFile;
  if (managed) {
    add(await readLayer('policySettings', managed, { optional: true, root: cwd }));
    // Drop-in files beside it (`managed-settings.d/*.json`), in name order, as Claude Code reads them.
    const dropIns = path.join(path.dirname(managed), 'managed-settings.d');
    for (const name of await jsonFilesIn(dropIns)) {
      add(await readLayer('policySettings', path.join(dropIns, name), { optional: true, root: cwd }));
    }
  }
  return { layers, warnings };
}

/** `/path` rules of a file are anchored at the directory holding its `.claude` folder. */
function rootOf(file: string): string {
  const dir = path.dirname(file);
  return path.basename(dir) === '.claude' ? path.dirname(dir) : dir;
}

async function readLayer(
  source: SettingSource,
  file: string,
  { optional, root }: { optional: boolean; root?: string },
): Promise<SettingsLayer | undefined> {
  const text = await readSettingsText(file, optional);
  if (text === undefined) return undefined;
  return { source, file, root: root ?? rootOf(file), json: parseSettings(text, file) };
}

async function flagLayer(given: string, cwd: string): Promise<SettingsLayer> {
  if (given.trim().startsWith('{')) {
    return { source: 'flagSettings', file: null, root: cwd, json: parseSettings(given, '--settings') };
  }
  const file = path.resolve(given);
  return (await readLayer('flagSettings', file, { optional: false })) as SettingsLayer;
}

async function readSettingsText(file: string, optional: boolean): Promise<string | undefined> {
  let size: number;
  try {
    const st = await stat(file);
    if (!st.isFile()) throw new SettingsError(file, null, 'not a regular file');
    size = st.size;
  } catch (e) {
    if (e instanceof SettingsError) throw e;
    if (optional && errnoCode(e) === 'ENOENT') return undefined;
    throw new SettingsError(file, null, `cannot read: ${messageOf(e)}`);
  }
  if (size > MAX_SETTINGS_BYTES)
    throw new SettingsError(
      file,
      null,
      `${size} bytes, over the ${MAX_SETTINGS_BYTES}-byte limit for a settings file`,
    );
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new SettingsError(file, null, `cannot read: ${messageOf(e)}`);
  }
}

/** Parses and checks one settings text; `where` names it in errors. */
export function parseSettings(text: string, where: string): Record<string, unknown> {
  const body = text.replace(/^\uFEFF/, '');
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (e) {
    throw new SettingsError(where, null, `not valid JSON: ${jsonErrorWhere(body, e)}`);
  }
  return checkSettings(json, where);
}

function unsupportedKeys(layer: SettingsLayer): string[] {
  const where = layer.file ?? (layer.source === 'cliArg' ? 'the command line' : '--settings');
  return Object.keys(layer.json)
    .filter((k) => Object.hasOwn(UNSUPPORTED_KEYS, k))
    .map((k) => `${where}: "${k}" is not supported and was ignored: ${UNSUPPORTED_KEYS[k]}`);
}

async function jsonFilesIn(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.startsWith('.')).sort();
  } catch (e) {
    if (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR') return [];
    throw new SettingsError(dir, null, `cannot read the directory: ${messageOf(e)}`);
  }
}
