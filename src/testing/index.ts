/**
 * `reloop/testing`: test your own agent's paths through the chart in a few lines, with any test
 * runner (vitest, node:test, …). Script the model's answers, run a session on a memory store,
 * then assert on the reasons it took and on what it covered of the chart. docs/testing.md has
 * a worked example.
 */
import type { z } from 'zod';
import { CoverageCounter, type CoverageReport } from '../coverage/coverage.ts';
import type { HooksOption, StopHook } from '../hooks/types.ts';
import type { StopReason } from '../model/messages.ts';
import { costOf } from '../model/pricing.ts';
import { parseScript, type ScriptTurnSchema } from '../model/script.ts';
import { ScriptedModelClient } from '../model/scripted.ts';
import type { ModelClient } from '../model/types.ts';
import { RecordedModelClient } from '../replay/recordedModel.ts';
import { type RerunOptions, type RerunReport, rerun } from '../replay/rerun.ts';
import type { RunSettings } from '../runtime/config.ts';
import { counterIds, seededRandom, VirtualClock } from '../runtime/determinism.ts';
import { type RunResult, Session } from '../runtime/session.ts';
import { MemoryEventStore } from '../store/memoryStore.ts';
import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AnyTool, AskUser, CanUseTool } from '../tools/types.ts';

export type { CoverageReport } from '../coverage/coverage.ts';
export { TOOL_OUTCOMES, type ToolOutcomeCounts, type ToolOutcomeName } from '../coverage/toolOutcomes.ts';

/**
 * One scripted answer of the model, as written in a script file (docs/script-format.md):
 * a response, an API error, or `{ abort: true }`. `usage` is optional (zero tokens).
 */
export type ScriptTurn = z.input<typeof ScriptTurnSchema>;

/** Tool-use turns whose ids `scriptedModel` numbers (`toolu_1`, `toolu_2`, … in script order). */
const numbered = new WeakSet<object>();

/** The model answers with text and stops (`end_turn` unless told). */
export function text(text: string, stopReason: StopReason = 'end_turn'): ScriptTurn {
  return { text, stop_reason: stopReason };
}

/**
 * The model asks for one tool call. Its id is deterministic: `scriptedModel` numbers the calls
 * `toolu_1`, `toolu_2`, … in script order (alone, the turn carries `toolu_<name>`).
 */
export function toolUse(name: string, input: unknown, stopReason: StopReason = 'tool_use'): ScriptTurn {
  const turn: ScriptTurn = {
    content: [{ type: 'tool_use', id: `toolu_${name}`, name, input: input as Record<string, unknown> }],
    stop_reason: stopReason,
  };
  numbered.add(turn);
  return turn;
}

/**
 * The API fails this request: `status` (e.g. 529 overloaded, 500, 400), the error `type`
 * (`overloaded_error`, `api_error`, `invalid_request_error`, …) and its message, optionally
 * with the retry-after delay the server asked for.
 */
export function apiError(
  status: number,
  type: string,
  message: string,
  options: { retryAfterMs?: number } = {},
): ScriptTurn {
  return {
    error: {
      status,
      type,
      message,
      ...(options.retryAfterMs !== undefined ? { retry_after_ms: options.retryAfterMs } : {}),
    },
  };
}

/** Lets `runSession` point a script's `{ abort: true }` turn at the session it runs. */
const abortTargets = new WeakMap<ModelClient, { abort?: () => void }>();

/**
 * A model that answers each request with the next turn, in order (turn requests and
 * compaction requests alike); running out of turns fails the run naming the turn. Throws a
 * `ScriptError` (code `SCRIPT_INVALID`) naming the turn when one is malformed. Costs come
 * from the built-in price table.
 */
export function scriptedModel(turns: readonly ScriptTurn[]): ModelClient {
  let n = 0;
  const withIds = turns.map((t) => {
    if (!numbered.has(t) || !('content' in t) || !t.content) return t;
    return {
      ...t,
      content: t.content.map((b) => (b.type === 'tool_use' ? { ...b, id: `toolu_${++n}` } : b)),
    };
  });
  const target: { abort?: () => void } = {};
  const client = new ScriptedModelClient(parseScript({ turns: withIds }), {
    costOf,
    requestAbort: () => target.abort?.(),
  });
  abortTargets.set(client, target);
  return client;
}

/**
 * What `runSession` runs: one `prompt`, or `prompts` — a conversation of one session, one run
 * per prompt, each sent when the run before it has ended.
 */
export type RunSessionOptions = RunSessionSetup & ({ prompt: string } | { prompts: readonly string[] });

export interface RunSessionSetup {
  model: ModelClient;
  /** The tools the model may call (none unless given; the built-ins are `builtinTools()` from `reloop`). */
  tools?: readonly AnyTool[] | ToolRegistry;
  /** Limits and model settings (maxTurns, autoCompactThreshold, …). */
  settings?: RunSettings;
  /** Working directory of the tools (default: the current directory). */
  cwd?: string;
  /** Where the log goes (default: a fresh memory store). */
  store?: EventStore;
  stopHooks?: readonly StopHook[];
  /** Hooks of every Claude Code event, as `Session.create` takes them (SDK shape). */
  hooks?: HooksOption;
  /** Permission policy (default: every call allowed). */
  canUseTool?: CanUseTool;
  /** Answers the policy's `ask`; without it an ask parks the run (or denies, `unattendedAsk: 'deny'`). */
  askUser?: AskUser;
  unattendedAsk?: 'park' | 'deny';
  /** Aborts the run in progress when it fires (the run ends `aborted`, its tools `interrupted`). */
  signal?: AbortSignal;
}

export interface SessionRun {
  /** The result of the last run. */
  result: RunResult;
  /** Every run's result, one per prompt sent (fewer than the prompts when a run paused or was aborted). */
  results: RunResult[];
  /** The session's whole log, in order. */
  records: LogRecord[];
  /** The transition reasons the runs took, in order (all runs). */
  reasons: string[];
}

/**
 * Runs one session to its end on `prompt`, or on each of `prompts` in turn (one run per prompt,
 * the history carried over as in a chat), and returns the results and the log. The runs stop
 * early after one that ends `paused` (it waits for an approval: a new prompt would be refused)
 * or `aborted`. Deterministic: one virtual clock for the whole session (backoffs take no time),
 * seeded randomness and counter ids, so two runs of the same script write the same records.
 * The script answers every run's requests in order, as one list.
 */
export async function runSession(options: RunSessionOptions): Promise<SessionRun> {
  const prompts = 'prompts' in options ? options.prompts : [options.prompt];
  if (prompts.length === 0) throw new TypeError('runSession: prompts is empty (give at least one prompt)');
  const store = options.store ?? new MemoryEventStore();
  const session = await Session.create({
    store,
    model: options.model,
    tools: options.tools ?? [],
    settings: options.settings,
    cwd: options.cwd ?? process.cwd(),
    stopHooks: options.stopHooks,
    hooks: options.hooks,
    canUseTool: options.canUseTool,
    askUser: options.askUser,
    unattendedAsk: options.unattendedAsk,
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('test-'),
  });
  const target = abortTargets.get(options.model);
  if (target) target.abort = () => session.abort();
  const results: RunResult[] = [];
  for (const prompt of prompts) {
    const result = await session.submit(prompt, { signal: options.signal });
    results.push(result);
    if (result.status === 'paused' || result.status === 'aborted') break;
  }
  const records: LogRecord[] = [];
  for await (const r of store.read(session.id)) records.push(r);
  return { result: results.at(-1)!, results, records, reasons: reasonsOf(records) };
}

/** The reasons of the transitions in `records`, in order. */
export function reasonsOf(records: Iterable<LogRecord>): string[] {
  const out: string[] = [];
  for (const r of records) if (r.type === 'transition') out.push(r.data.reason);
  return out;
}

/**
 * What these records cover of the chart: exactly the shape `reloop coverage --json` prints,
 * `{ reasons: { covered, missing }, edges: { covered, total, missing }, tools }`, where `tools`
 * gives each tool's calls per outcome (`{ Read: { ok: 3, denied: 1, parked: 0, … } }`, every
 * outcome of TOOL_OUTCOMES present). Give one session's records or a list of them (one per session).
 */
export function coverageOf(
  records: readonly LogRecord[] | readonly (readonly LogRecord[])[],
): CoverageReport {
  const counter = new CoverageCounter();
  for (const item of records) {
    if (Array.isArray(item)) counter.addAll(item as readonly LogRecord[]);
    else counter.add(item as LogRecord);
  }
  return counter.detail().report;
}

export type { DivergenceKind, RerunDivergence } from '../replay/divergence.ts';
export { ReplayMismatchError } from '../replay/errors.ts';
export type { RerunOptions, RerunReport } from '../replay/rerun.ts';

/**
 * A ModelClient that answers from a recorded session's log, request by request, and throws
 * `ReplayMismatchError` (with the divergence: seq, kind `request`, path, recorded, current) when
 * the code under test sends a request the log does not have — a test fails on a cache miss
 * instead of calling the API. `records`: the session's log (`store.read(id)`, a `.jsonl` read back).
 */
export function recordedModel(records: Iterable<LogRecord>): ModelClient {
  return new RecordedModelClient(records);
}

/**
 * Reruns a recorded session against the code under test (`rerun` of the library, on a memory store
 * with a virtual clock): `{ identical, divergence, turns, diff, records }`. `options` are what
 * `Session.create` takes — your tools, policy, hooks, system prompt — and `toolMode: 'recorded'`
 * to answer the tools from the log too.
 */
export function rerunSession(records: Iterable<LogRecord>, options: RerunOptions = {}): Promise<RerunReport> {
  return rerun(records, options);
}
