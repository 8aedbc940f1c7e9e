export * from './approvals.ts';
export * from './backoff.ts';
export * from './budget.ts';
export { MAX_PARALLEL_CHILDREN, type SubAgentsOptions } from './children/index.ts';
export * from './config.ts';
export * from './determinism.ts';
export * from './driveMachine.ts';
export {
  NothingToRunError,
  OpenToolCallsError,
  type RunResult,
  Session,
  SessionBusyError,
  type SessionOptions,
} from './session.ts';
export { type RecordListener, SessionWriter } from './sessionWriter.ts';
export {
  type MemoryFileFact,
  type PermissionRuleFact,
  type PermissionSetup,
  SetupChangedError,
} from './setup.ts';
export * from './streamEvents.ts';
export { type SystemPromptOption, systemPromptText } from './systemPrompt.ts';
