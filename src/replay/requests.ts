import type { AppendOnlyList } from '../lib/appendOnlyList.ts';
import { memoryContext, withMemory } from '../memory/context.ts';
import type { Message } from '../model/messages.ts';
import type { ModelRequest, ToolSpec } from '../model/types.ts';
import { compactionRequest } from '../runtime/compactor.ts';
import { evolve } from '../store/evolve.ts';
import type { LogRecord, RecordOf, SetupTool } from '../store/records.ts';
import { emptySessionState, type RecordedSetup } from '../store/sessionState.ts';

/** One model request of a log, rebuilt from the run's setup and the history as the fold has it then. */
export interface RecordedRequest {
  /** The `model.requested` record. */
  seq: number;
  run: string | null;
  purpose: 'turn' | 'compaction';
  attempt: number;
  model: string;
  maxTokens: number;
  /** The system prompt as sent (`run.started.config.system`; a compaction's own for a compaction). */
  system: string | undefined;
  /** The tools offered; null when the log has no recorded setup (written before `run.setup`). */
  tools: readonly ToolSpec[] | null;
  /** The history the request carried (a compaction's adds its instruction). */
  messages: AppendOnlyList<Message>;
  /** The run's CLAUDE.md memory as it was put before the first user turn (`memory.loaded`), or null. */
  memory: string | null;
  /** How the request ended: the response, or the failure; undefined when the log ends first. */
  answer: RecordOf<'model.responded'> | RecordOf<'model.failed'> | undefined;
}

/** The request as a `ModelRequest` (its tools empty when the log recorded none). */
export function requestOf(r: RecordedRequest): ModelRequest {
  const history = r.messages.view();
  const tools = r.tools ?? [];
  if (r.purpose === 'compaction') return compactionRequest(history, r.model, r.maxTokens, tools);
  return {
    model: r.model,
    ...(r.system !== undefined ? { system: r.system } : {}),
    messages: withMemory(history, r.memory),
    tools,
    maxTokens: r.maxTokens,
  };
}

const specsCache = new WeakMap<readonly SetupTool[], ToolSpec[]>();

/** A setup's tools as the request names them (one array per recorded list). */
export function toolSpecsOf(setup: RecordedSetup | null): readonly ToolSpec[] | null {
  if (!setup) return null;
  let specs = specsCache.get(setup.tools);
  if (!specs) {
    specs = setup.tools.map((t) => ({
      name: t.name,
      description: t.description,
      input_schema: t.inputSchema,
    }));
    specsCache.set(setup.tools, specs);
  }
  return specs;
}

/**
 * Every model request of a log, in order, with its answer: what the model was sent, rebuilt from
 * `run.started` (system prompt), `run.setup` (tools), `memory.loaded` (CLAUDE.md), `model.requested`
 * (model, max_tokens) and the history the fold holds at that record. Pulls `records` lazily.
 */
export function* recordedRequests(records: Iterable<LogRecord>): Generator<RecordedRequest> {
  let state = emptySessionState();
  let pending: RecordedRequest | null = null;
  // The memory of the run that recorded it (a run without a memory.loaded had none).
  let memory: { run: string | null; text: string | null } | null = null;
  for (const r of records) {
    state = evolve(state, r);
    if (r.type === 'memory.loaded') memory = { run: r.run, text: memoryContext(state.memory?.files ?? []) };
    if (r.type === 'model.requested') {
      if (pending) yield pending;
      const d = r.data;
      const run = state.currentRun;
      const setup = state.setup && state.setup.run === r.run ? state.setup : null;
      pending = {
        seq: r.seq,
        run: r.run,
        purpose: d.purpose,
        attempt: d.attempt,
        model: d.model,
        maxTokens: d.maxTokens,
        system: d.purpose === 'turn' ? run?.config.system : undefined,
        tools: toolSpecsOf(setup),
        messages: state.messages,
        memory: d.purpose === 'turn' && memory?.run === r.run ? memory.text : null,
        answer: undefined,
      };
    } else if ((r.type === 'model.responded' || r.type === 'model.failed') && pending) {
      pending.answer = r;
      yield pending;
      pending = null;
    }
  }
  if (pending) yield pending;
}
