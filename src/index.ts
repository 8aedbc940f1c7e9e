/** reloop's public API: the chart, the runtime, the stores, replay, model clients, tools, hooks, settings and permission rules, sub-agent definitions and the importer. */
export * from './agents/index.ts';
export * from './hooks/index.ts';
export * from './import/index.ts';
export * from './machines/index.ts';
export * from './mcp/index.ts';
export * from './model/index.ts';
export * from './replay/index.ts';
export * from './runtime/index.ts';
export {
  PermissionSetupError,
  permissionSetup,
  type ResolvedPermissions,
  runSettingsLayers,
  ToolListError,
} from './runtime/permissionSetup.ts';
export {
  addLocalRule,
  FILE_SOURCES,
  type FileSource,
  type LoadedSettings,
  loadSettings,
  parseSettingSources,
  permissionSettings,
  SettingsError,
  type SettingsLayer as SettingsFileLayer,
} from './settings/index.ts';
export * from './store/index.ts';
export * from './tools/index.ts';
export { compileRuleEntries, type RuleEntry, type RuleSet } from './tools/permissions/ruleSet.ts';
export * from './viz/index.ts';
