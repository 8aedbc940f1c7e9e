export { memoryContext, withMemory } from './context.ts';
export { importPaths } from './imports.ts';
export {
  type LoadedMemory,
  type LoadMemoryOptions,
  loadMemory,
  MAX_IMPORT_DEPTH,
  MAX_MEMORY_FILE_BYTES,
  type MemoryFile,
  type MemorySource,
} from './load.ts';
