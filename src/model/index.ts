export { AnthropicModelClient, hasApiKey } from './anthropic.ts';
export * from './history.ts';
export * from './messages.ts';
export * from './pricing.ts';
export * from './script.ts';
export { type ScriptedClientOptions, ScriptedModelClient } from './scripted.ts';
export * from './types.ts';
