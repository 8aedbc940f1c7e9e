export {
  type LoadedSettings,
  type LoadSettingsOptions,
  loadSettings,
  MAX_SETTINGS_BYTES,
  parseSettings,
  type SettingsLayer,
} from './load.ts';
export { addLocalRule, localSettingsFile } from './localRules.ts';
export {
  highestSetting,
  layerLabel,
  PERMISSION_MODES,
  type PermissionModeName,
  type PermissionRuleEntry,
  type PermissionSettings,
  permissionSettings,
  type RuleBehavior,
} from './permissions.ts';
export { checkSettings, SettingsError, SettingsFileSchema, UNSUPPORTED_KEYS } from './schema.ts';
export {
  FILE_SOURCES,
  type FileSource,
  homeDir,
  MANAGED_SETTINGS_FILE,
  managedSettingsFile,
  parseSettingSources,
  SETTING_SOURCES,
  type SettingSource,
  SettingSourcesError,
  settingSourceOf,
  userClaudeDir,
} from './sources.ts';
