/** reloop's public API: the chart, the runtime, the stores, replay, model clients, tools, hooks, sub-agent definitions and the importer. */
export * from './agents/index.ts';
export * from './hooks/index.ts';
export * from './import/index.ts';
export * from './machines/index.ts';
export * from './mcp/index.ts';
export * from './model/index.ts';
export * from './replay/index.ts';
export * from './runtime/index.ts';
export * from './store/index.ts';
export * from './tools/index.ts';
export * from './viz/index.ts';
