export * from './builtin/index.ts';
export * from './orchestrator.ts';
export * from './permissions/index.ts';
export * from './registry.ts';
export type * from './types.ts';
