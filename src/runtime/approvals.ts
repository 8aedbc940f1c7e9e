import { toolUsesOf } from '../model/messages.ts';
import { ConcurrencyError } from '../store/errors.ts';
import { evolve } from '../store/evolve.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../store/records.ts';
import { type ApprovalEntry, emptySessionState, type SessionState } from '../store/sessionState.ts';
import type { EventStore } from '../store/types.ts';
import { type Clock, systemClock } from './determinism.ts';

/** A session parked on approvals was given a new prompt: its open tool calls must be answered first. */
export class AwaitingApprovalError extends Error {
  readonly code = 'AWAITING_APPROVAL';
  constructor(
    readonly sessionId: string,
    readonly toolUseIds: readonly string[],
  ) {
    super(
      `session ${sessionId} is parked on tool calls awaiting approval (${toolUseIds.join(', ')}): ` +
        'approve or deny them (reloop approvals), then resume it without a prompt',
    );
    this.name = 'AwaitingApprovalError';
  }
}

export class ApprovalNotFoundError extends Error {
  readonly code = 'APPROVAL_NOT_FOUND';
  constructor(
    readonly sessionId: string,
    readonly toolUseId: string,
    readonly detail: string,
  ) {
    super(`session ${sessionId}: ${detail}`);
    this.name = 'ApprovalNotFoundError';
  }
}

/**
 * The tool calls a session is parked on: its last run ended `paused` and the history still ends
 * with their tool_use blocks. Empty when the session is not parked.
 */
export function parkedCalls(state: SessionState): ApprovalEntry[] {
  const lastRun = state.runs.last();
  if (state.currentRun || lastRun?.status !== 'paused') return [];
  const last = state.messages.last();
  if (last?.role !== 'assistant') return [];
  return toolUsesOf(last.content).flatMap((u) => {
    const entry = state.approvals.get(u.id);
    return entry ? [entry] : [];
  });
}

/** The approvals a session waits for: parked calls nobody has answered yet. */
export function pendingApprovals(state: SessionState): ApprovalEntry[] {
  return parkedCalls(state).filter((a) => a.decision === null);
}

export interface Decision {
  allow: boolean;
  /** Who decided (goes into the log and the permission record). */
  by: string;
  /** For a denial: what the model is told. */
  message?: string;
}

/**
 * Appends the answer to one approval request as `approval.decided`, between runs. Only an open
 * request of a parked session can be answered, once: a second answer (or a racing approver,
 * who gets the store's ConcurrencyError and re-reads) is refused by name.
 */
export async function decideApproval(
  store: EventStore,
  sessionId: string,
  toolUseId: string,
  decision: Decision,
  clock: Clock = systemClock,
): Promise<{ state: SessionState; pending: ApprovalEntry[] }> {
  for (let attempt = 0; ; attempt++) {
    let state = emptySessionState();
    for await (const r of store.read(sessionId)) state = evolve(state, r);
    const entry = parkedCalls(state).find((a) => a.toolUseId === toolUseId);
    if (!entry) {
      const known = state.approvals.get(toolUseId);
      throw new ApprovalNotFoundError(
        sessionId,
        toolUseId,
        known
          ? `${toolUseId} is not waiting for approval (its batch was already resumed)`
          : `no approval request ${toolUseId} (reloop approvals lists them)`,
      );
    }
    if (entry.decision) {
      throw new ApprovalNotFoundError(
        sessionId,
        toolUseId,
        `${toolUseId} was already ${entry.decision.allow ? 'approved' : 'denied'} by ${entry.decision.by}`,
      );
    }
    const record = {
      v: CURRENT_SCHEMA_VERSION,
      seq: state.lastSeq + 1,
      at: clock.now(),
      session: sessionId,
      run: null,
      type: 'approval.decided',
      data: {
        toolUseId,
        decision: decision.allow ? 'allow' : 'deny',
        by: decision.by,
        ...(decision.message ? { message: decision.message } : {}),
      },
    } as LogRecord;
    try {
      await store.append(sessionId, [record], { expectedSeq: state.lastSeq });
    } catch (e) {
      if (e instanceof ConcurrencyError && attempt < 5) continue;
      throw e;
    }
    const after = evolve(state, record);
    return { state: after, pending: pendingApprovals(after) };
  }
}
