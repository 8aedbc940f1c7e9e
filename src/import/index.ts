export { ChartWalk, ImportBugError } from './chartWalk.ts';
export { type AgentMeta, linkChild, readAgentMeta } from './childLinks.ts';
export { classifyLine } from './claudeCode/classify.ts';
export type { TranscriptEvent } from './claudeCode/events.ts';
export { type MappedTranscript, mapTranscript, type TranscriptLinks } from './claudeCode/mapTranscript.ts';
export {
  parseTranscript,
  readTranscript,
  type Transcript,
  type TranscriptInfo,
} from './claudeCode/readTranscript.ts';
export { type Discovery, discoverTranscripts, ImportPathError, type TranscriptUnit } from './discover.ts';
export {
  ImportConflictError,
  type ImportedSession,
  type ImportOptions,
  type ImportReport,
  importedSessionId,
  importTranscripts,
} from './importer.ts';
