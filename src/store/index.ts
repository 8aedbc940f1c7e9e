export * from './errors.ts';
export * from './evolve.ts';
export { FileEventStore, openFileStore } from './fileStore.ts';
export { MemoryEventStore } from './memoryStore.ts';
export * from './records.ts';
export * from './sessionState.ts';
export * from './turns.ts';
export type * from './types.ts';
export * from './validate.ts';
