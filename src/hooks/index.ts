export {
  describeHooks,
  type HookDescription,
  HookSettingsError,
  hooksFromLayers,
  type LoadedHooks,
  mergeHooks,
  type SettingsLayer as HookSettingsLayer,
} from './config.ts';
export { HOOK_EVENTS, type HookEvent } from './events.ts';
export { compileMatcher, MatcherSyntaxError } from './matcher.ts';
export { type HookRun, type HookRunContext, HookRunner } from './runner.ts';
export { commandLineHooks, flagSettingsLayer, runHooksFromFlags, runHooksFromLayers } from './settings.ts';
export type * from './types.ts';
