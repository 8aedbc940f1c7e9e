import os from 'node:os';
import path from 'node:path';

/**
 * Where settings come from, lowest precedence first, by Claude Code's own names. Permission rule
 * arrays of every source add up; a scalar (`defaultMode`, `model`) is the highest source's that
 * sets it. `cliArg` is the CLI's own flags (`--allow`, `--allowedTools`, `--permission-mode`,
 * `--add-dir`) as one more layer without a file; `policySettings` (managed) cannot be overridden.
 */
export const SETTING_SOURCES = [
  'userSettings',
  'projectSettings',
  'localSettings',
  'flagSettings',
  'cliArg',
  'policySettings',
] as const;
export type SettingSource = (typeof SETTING_SOURCES)[number];

/** The sources `--setting-sources` (and the library's `settingSources`) choose from. */
export const FILE_SOURCES = ['user', 'project', 'local'] as const;
export type FileSource = (typeof FILE_SOURCES)[number];

const SOURCE_OF: Record<FileSource, SettingSource> = {
  user: 'userSettings',
  project: 'projectSettings',
  local: 'localSettings',
};

export function settingSourceOf(s: FileSource): SettingSource {
  return SOURCE_OF[s];
}

export class SettingSourcesError extends Error {
  readonly code = 'SETTING_SOURCES_INVALID';
  constructor(readonly given: string) {
    super(
      `--setting-sources takes a comma-separated list of ${FILE_SOURCES.join(', ')} (or "" for none), got ${JSON.stringify(given)}`,
    );
    this.name = 'SettingSourcesError';
  }
}

/** `user,project,local` → the file sources, in their precedence order; `""` is none. */
export function parseSettingSources(text: string): FileSource[] {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const n of names) {
    if (!(FILE_SOURCES as readonly string[]).includes(n)) throw new SettingSourcesError(text);
  }
  return FILE_SOURCES.filter((s) => names.includes(s));
}

/** Where Claude Code keeps the managed (policy) settings on Linux. */
export const MANAGED_SETTINGS_FILE = '/etc/claude-code/managed-settings.json';

/**
 * The home directory settings and memory are read from: `RELOOP_HOME` when set (tests point it at
 * a scratch directory, so they never read the real `~/.claude`), else the user's home.
 */
export function homeDir(env: NodeJS.ProcessEnv = process.env): string {
  const given = env.RELOOP_HOME;
  return given ? path.resolve(given) : os.homedir();
}

/**
 * The user's Claude directory: `<RELOOP_HOME>/.claude` when `RELOOP_HOME` is set (so a test never
 * reaches the real one), else `CLAUDE_CONFIG_DIR` as Claude Code reads it, else `~/.claude`.
 */
export function userClaudeDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.RELOOP_HOME) return path.join(path.resolve(env.RELOOP_HOME), '.claude');
  if (env.CLAUDE_CONFIG_DIR) return path.resolve(env.CLAUDE_CONFIG_DIR);
  return path.join(os.homedir(), '.claude');
}

/** The managed settings file: `RELOOP_MANAGED_SETTINGS` when set (tests), else Claude Code's path. */
export function managedSettingsFile(env: NodeJS.ProcessEnv = process.env): string {
  return env.RELOOP_MANAGED_SETTINGS ? path.resolve(env.RELOOP_MANAGED_SETTINGS) : MANAGED_SETTINGS_FILE;
}
