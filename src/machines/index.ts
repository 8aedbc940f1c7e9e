export type * from './context.ts';
export * from './guards.ts';
export * from './loopMessages.ts';
export { type QueryLoopActor, type QueryLoopMachine, queryLoopMachine } from './queryLoop.machine.ts';
export * from './reasons.ts';
export * from './stopDecision.ts';
