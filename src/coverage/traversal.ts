import type { AnyEventObject } from 'xstate';
import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import type { RunInput } from '../machines/context.ts';
import type { EffectName } from '../machines/effects.ts';
import { type RunSettings, resolveRunConfig } from '../runtime/config.ts';

/**
 * Vocabulary of path coverage. The facts the chart's guards tell apart, one finite list per
 * invoked actor (the list itself is in factVariants.ts). Each variant carries (a) the done / error event `@xstate/graph` feeds the machine during traversal
 * (invoked actors never run there) and (b) the driver that makes the real runtime
 * produce the same fact. A variant whose driver is null cannot be run: any scenario that needs
 * it fails, naming its edge.
 */

/** The chart's effects, by the names its done / error events carry. */
export type ActorId = EffectName;

/** The test tools a scenario's tool_use may call (see runScenario.ts). */
export type TestToolName = 'echo' | 'bigOutput' | 'interrupt' | 'needsApproval' | 'stopper';
/** `subagentBlock`: the session runs as a sub-agent, and its SubagentStop hook blocks. */
export type StopAnswer = 'allow' | 'block' | 'prevent' | 'budgetContinue' | 'subagentBlock';
/** What the run's UserPromptSubmit hook answers (its first build). */
export type PromptHookAnswer = 'block' | 'stop' | 'context';
/** One raw entry of a scripted-model script (validated by parseScript when a scenario is built). */
export type ScriptEntry = Record<string, unknown>;

export type Driver =
  /** The live actor produces the fact unaided (a request is built, a backoff elapses). */
  | { kind: 'live' }
  /** The scripted model answers the request with this entry; `toolUse` is filled per scenario. */
  | { kind: 'modelTurn'; turn: ScriptEntry | 'toolUse' }
  /** The model's tool_use calls this test tool. */
  | { kind: 'tool'; tool: TestToolName }
  /** The stop hook (or, for budgetContinue, the budget policy) answers this. */
  | { kind: 'stopAnswer'; answer: StopAnswer }
  /** The UserPromptSubmit hook answers this before the first request. */
  | { kind: 'promptHook'; answer: PromptHookAnswer }
  /** The PreCompact hook refuses the compaction: a block, or continue: false. */
  | { kind: 'preCompact'; answer: 'block' | 'stop' }
  /** The session is aborted just as the actor starts: the live actor meets a real abort. */
  | { kind: 'abortAtStart' }
  /** For this invocation the actor is replaced by one that throws (a bug, a broken plug-in). */
  | { kind: 'brokenActor' }
  /**
   * The session starts parked on an approved batch: a first run parks on a `needsApproval`
   * call, the approval is given, and the scenario's run resumes it.
   */
  | { kind: 'parkedBatch' }
  /** The scenario's run is a manual compaction (`Session.compact()`) of a session that has a history. */
  | { kind: 'manualCompact' };

export interface FactVariant {
  /** `<actor>.<name>`: how paths, scenarios and the CLI name a step. */
  id: string;
  actor: ActorId;
  name: string;
  event: AnyEventObject;
  driver: Driver | null;
  doc: string;
  /**
   * Only ever the first step of a path (a fact about how a run starts): the breadth-first search
   * never goes through it, so it reaches its own edges without shortening every other path.
   */
  firstStepOnly?: boolean;
}

// ---- The traversal configuration: small limits keep the state space finite and paths short.

export const TRAVERSAL_BUDGET_TOKENS = 1_000;
export const TRAVERSAL_COMPACT_THRESHOLD = 2_000;

export const TRAVERSAL_SETTINGS: RunSettings = {
  fallbackModel: 'claude-haiku-4-5',
  maxTurns: 2,
  maxTokensRecoveries: 1,
  maxTransportAttempts: 3,
  overloadsBeforeFallback: 2,
  autoCompactThreshold: TRAVERSAL_COMPACT_THRESHOLD,
  autoCompactBreaker: 2,
  stopHookBlockCap: 1,
  maxBudgetTokens: TRAVERSAL_BUDGET_TOKENS,
};

/** The machine input traversal starts from: one user message, a closed breaker count. */
export function traversalInput(settings: RunSettings = TRAVERSAL_SETTINGS): RunInput {
  return {
    config: resolveRunConfig(settings),
    messages: AppendOnlyList.from([{ role: 'user', content: 'Fix the failing test.' }]),
    autoCompactFailures: 0,
  };
}
