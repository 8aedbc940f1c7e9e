import { expect, it } from 'vitest';
import { z } from 'zod';
import {
  REASON_DOCS,
  TERMINAL_STATUS,
  type TerminalReason,
  type TransitionReason,
} from '../../../src/machines/reasons.ts';
import { type RunResult, Session } from '../../../src/runtime/session.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import type { CanUseTool, Tool } from '../../../src/tools/types.ts';
import type { scriptedSession } from '../../support/harness.ts';
import { recordsOf } from '../../support/logRecords.ts';

export type Harness = Awaited<ReturnType<typeof scriptedSession>>;

/** The spec files of test/runtime/reasons, one per area of the loop. */
export const AREAS = [
  'stopReasons',
  'maxTokens',
  'compaction',
  'transport',
  'stopHooks',
  'budget',
  'maxTurns',
  'abort',
  'toolErrors',
  'approvals',
  'hooks',
] as const;
export type Area = (typeof AREAS)[number];

/**
 * Which spec file must drive the real runtime into each reason of the vocabulary. The type
 * makes tsc fail when a reason is added to REASON_DOCS without an owner; coverage.test.ts checks
 * the same at run time, and each file's last test checks that it asserted every reason it owns.
 */
export const REASON_OWNER: Record<TransitionReason, Area> = {
  query_built: 'stopReasons',
  tool_use_requested: 'stopReasons',
  finish_requested: 'stopReasons',
  tool_result_continuation: 'stopReasons',
  completed: 'stopReasons',
  refused: 'stopReasons',
  pause_turn_continuation: 'stopReasons',
  max_tokens_escalation: 'maxTokens',
  max_tokens_recovery: 'maxTokens',
  max_tokens_exhausted: 'maxTokens',
  compact_retry: 'compaction',
  compacted: 'compaction',
  auto_compact: 'compaction',
  compaction_failed: 'compaction',
  prompt_too_long: 'compaction',
  manual_compact: 'compaction',
  manual_compacted: 'compaction',
  manual_compaction_blocked: 'compaction',
  manual_compaction_failed: 'compaction',
  transport_retry: 'transport',
  backoff_elapsed: 'transport',
  model_fallback: 'transport',
  model_error: 'transport',
  stop_hook_continuation: 'stopHooks',
  stop_hook_prevented: 'stopHooks',
  stop_hook_block_limit: 'stopHooks',
  budget_continuation: 'budget',
  budget_exhausted: 'budget',
  max_turns_reached: 'maxTurns',
  aborted: 'abort',
  runtime_error: 'toolErrors',
  awaiting_approval: 'approvals',
  tool_batch_resumed: 'approvals',
  prompt_blocked: 'hooks',
  hook_stopped: 'hooks',
  hook_context: 'hooks',
  compaction_blocked: 'hooks',
  compaction_blocked_overflow: 'hooks',
  subagent_stop_continuation: 'hooks',
};

export function reasonsOwnedBy(area: Area): TransitionReason[] {
  return (Object.keys(REASON_DOCS) as TransitionReason[]).filter((r) => REASON_OWNER[r] === area);
}

export { recordsOf };

/** Transition reasons of one run, in the order they were logged. */
export async function runReasons(h: Harness, runId: string): Promise<string[]> {
  return recordsOf(await h.records(), 'transition')
    .filter((r) => r.run === runId)
    .map((r) => r.data.reason);
}

/**
 * The assertions of one spec file. `expectRun` checks a finished run against its full
 * transition-reason sequence (from the log), its terminal status, its `run.ended` record, the
 * history's validity and that the log holds everything the live session knows; the reasons it
 * asserted are remembered so the file's last test can check it covered every reason it owns.
 */
export function reasonSpec(area: Area) {
  const asserted = new Set<TransitionReason>();

  async function expectRun(
    h: Harness,
    result: RunResult,
    expected: readonly TransitionReason[],
  ): Promise<LogRecord[]> {
    expect(await runReasons(h, result.runId)).toEqual(expected);
    const last = expected.at(-1) as TerminalReason;
    expect(Object.hasOwn(TERMINAL_STATUS, last), `${last} is not a terminal reason`).toBe(true);
    expect(result.reason).toBe(last);
    expect(result.status).toBe(TERMINAL_STATUS[last]);
    const records = await h.records();
    const ended = recordsOf(records, 'run.ended').filter((r) => r.run === result.runId);
    expect(ended).toHaveLength(1);
    expect(ended[0]!.data).toMatchObject({ status: result.status, reason: last, turns: result.turns });
    expect(ended[0]!.data.usage).toEqual(result.usage);
    // Every tool_use of the history has its tool_result, whatever way the run ended — except the
    // calls a paused run parked on, left open on purpose for the resumed run to answer.
    const open = `message ${h.session.state.messages.length - 1}:`;
    const problems = h.historyProblems();
    expect(result.status === 'paused' ? problems.filter((p) => !p.startsWith(open)) : problems).toEqual([]);
    // Nothing the live session knows is missing from the log: a rebuild gives the same state.
    const reopened = await Session.open(h.session.id, { store: h.store, model: h.client });
    expect(reopened.state.messages.toArray()).toEqual(h.session.state.messages.toArray());
    expect(reopened.state.usage).toEqual(h.session.state.usage);
    expect(reopened.state.lastSeq).toBe(h.session.state.lastSeq);
    for (const r of expected) asserted.add(r);
    return records;
  }

  /** Registers the file's final test: every reason this area owns was asserted by a test above. */
  function ownedReasonsAsserted(): void {
    it(`drove the runtime into every reason the ${area} spec owns`, () => {
      const missing = reasonsOwnedBy(area).filter((r) => !asserted.has(r));
      expect(missing).toEqual([]);
    });
  }

  return { expectRun, ownedReasonsAsserted, asserted };
}

// ---- Scripted responses with explicit usage.

export function usage(input_tokens: number, output_tokens: number) {
  return { input_tokens, output_tokens };
}

export function toolUse(id: string, name: string, input: unknown) {
  return { type: 'tool_use', id, name, input };
}

export function text(value: string, stop_reason = 'end_turn', u = usage(100, 10)) {
  return { text: value, stop_reason, usage: u };
}

export function tools(blocks: ReturnType<typeof toolUse>[], stop_reason = 'tool_use', u = usage(100, 20)) {
  return { content: blocks, stop_reason, usage: u };
}

export function summary(value = 'SUMMARY: goal, files, next step', u = usage(50, 30)) {
  return { text: value, for: 'compaction', usage: u };
}

export function httpError(status: number | undefined, message = `HTTP ${status}`, extra = {}) {
  return { error: { ...(status !== undefined ? { status } : {}), message, ...extra } };
}

export const PROMPT_TOO_LONG = httpError(400, 'prompt is too long: 210000 tokens > 200000 maximum', {
  type: 'invalid_request_error',
});

// ---- Test tools.

/** A tool built from a function, with the flags the orchestrator reads. */
export function testTool(
  name: string,
  call: Tool<{ text?: string }>['call'],
  flags: { safe?: boolean; readOnly?: boolean; timeoutMs?: number } = {},
): Tool<{ text?: string }> {
  return {
    name,
    description: `test tool ${name}`,
    inputSchema: z.object({ text: z.string().optional() }),
    isReadOnly: flags.readOnly ?? true,
    isConcurrencySafe: () => flags.safe ?? true,
    ...(flags.timeoutMs !== undefined ? { timeoutMs: flags.timeoutMs } : {}),
    call,
  };
}

/** A promise with its resolve function, for tests that sequence concurrent work without timers. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Resolves when the signal aborts (a tool that runs until it is stopped). */
export function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

export function textOfMessages(h: Harness): string[] {
  return h.session.state.messages
    .view()
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : m.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(''),
    );
}

/** The policy of the approval tests: `guarded` needs approval, everything else is allowed. */
export const askForGuarded: CanUseTool = (req) =>
  req.tool.name === 'guarded'
    ? { behavior: 'ask', message: 'guarded touches the outside world', by: 'rule' }
    : { behavior: 'allow', by: 'rule' };

export function counted() {
  const calls: string[] = [];
  const tool = testTool(
    'guarded',
    async ({ text }) => {
      calls.push(text ?? '');
      return { content: `did ${text}` };
    },
    { readOnly: false, safe: false },
  );
  return { calls, tool };
}
