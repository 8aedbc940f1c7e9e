export { importedFromOf } from './conformance.ts';
export type { DivergenceKind, RerunDivergence } from './divergence.ts';
export * from './errors.ts';
export * from './fork.ts';
export * from './loadSession.ts';
export { RecordedModelClient, type RecordedModelOptions, recordedModel } from './recordedModel.ts';
export {
  parseResponseFile,
  parseToolResultFile,
  ReplacementFileError,
  type ToolResultReplacement,
} from './replacement.ts';
export { type RecordedRequest, recordedRequests, requestOf } from './requests.ts';
export { type RerunOptions, type RerunReport, rerun } from './rerun.ts';
export { sessionTree, type TreeMember } from './sessionTree.ts';
export { type Divergence, type VerifyOptions, type VerifyReport, verifyReplay } from './verify.ts';
export {
  type TreeSessionReport,
  type TreeVerifyReport,
  verifyTree,
} from './verifyTree.ts';
