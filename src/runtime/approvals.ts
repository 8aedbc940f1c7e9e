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

/**
 * A session parked on its sub-agents was resumed while one of them still waits for an answer:
 * resuming would only park the tree again. Names the session and the call to answer first.
 */
export class SubAgentAwaitingApprovalError extends AwaitingApprovalError {
  constructor(
    sessionId: string,
    readonly waiting: readonly TreeApproval[],
  ) {
    super(
      sessionId,
      waiting.map((w) => w.entry.toolUseId),
    );
    const first = waiting[0]!;
    this.message =
      `session ${sessionId} is parked on its sub-agents' tool calls awaiting approval (` +
      `${waiting.map((w) => `${w.entry.toolUseId} of session ${w.session}`).join(', ')}): ` +
      `approve or deny them (reloop approve|deny ${first.session} ${first.entry.toolUseId}), then resume it`;
    this.name = 'SubAgentAwaitingApprovalError';
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

/**
 * The approvals a session waits for: parked calls nobody has answered yet. A `Task` call parked
 * on its sub-agent is not one of them (its child's calls are: see `pendingInTree`).
 */
export function pendingApprovals(state: SessionState): ApprovalEntry[] {
  return parkedCalls(state).filter((a) => a.decision === null && a.child === undefined);
}

/** An approval some session of a tree waits for. */
export interface TreeApproval {
  session: string;
  /** The session whose `Task` call started it (null: the root itself). */
  parent: string | null;
  entry: ApprovalEntry;
}

async function loadState(store: EventStore, sessionId: string): Promise<SessionState> {
  let state = emptySessionState();
  for await (const r of store.read(sessionId)) state = evolve(state, r);
  return state;
}

/**
 * The unanswered approvals below a parked session: those of each sub-agent its `Task` calls are
 * parked on, and of theirs in turn. The session's own are `pendingApprovals(state)`.
 */
export async function pendingBelow(
  store: EventStore,
  sessionId: string,
  state: SessionState,
): Promise<TreeApproval[]> {
  const out: TreeApproval[] = [];
  for (const call of parkedCalls(state)) {
    if (call.child === undefined || !(await store.exists(call.child))) continue;
    const child = await loadState(store, call.child);
    for (const entry of pendingApprovals(child)) out.push({ session: call.child, parent: sessionId, entry });
    out.push(...(await pendingBelow(store, call.child, child)));
  }
  return out;
}

/**
 * The tree a session is the root of: whether it is parked, every unanswered approval of the
 * tree (its own first), and its last seq (where a re-queued run takes over).
 */
export async function treeApprovals(
  store: EventStore,
  root: string,
): Promise<{ parked: boolean; pending: TreeApproval[]; lastSeq: number }> {
  const state = await loadState(store, root);
  return {
    parked: parkedCalls(state).length > 0,
    pending: [
      ...pendingApprovals(state).map((entry) => ({ session: root, parent: null, entry })),
      ...(await pendingBelow(store, root, state)),
    ],
    lastSeq: state.lastSeq,
  };
}

/** The session whose `Task` call started `sessionId` (null for a top-level session). */
export async function parentOf(store: EventStore, sessionId: string): Promise<string | null> {
  for await (const r of store.read(sessionId, { toSeq: 1 })) {
    if (r.type === 'session.created') return r.data.parent?.session ?? null;
  }
  return null;
}

/** The top-level session of the tree `sessionId` belongs to, and the chain of parents up to it. */
export async function rootOf(
  store: EventStore,
  sessionId: string,
): Promise<{ root: string; parent: string | null }> {
  const parent = await parentOf(store, sessionId);
  let root = sessionId;
  // A cycle cannot be written (a child's id is announced before it exists); the bound is a guard.
  for (let up = parent, depth = 0; up !== null && depth < 100; depth++) {
    root = up;
    up = await parentOf(store, up);
  }
  return { root, parent };
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
    const state = await loadState(store, sessionId);
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
    if (entry.child !== undefined) {
      throw new ApprovalNotFoundError(
        sessionId,
        toolUseId,
        `${toolUseId} waits for its sub-agent, session ${entry.child}: answer that session's calls (reloop approvals)`,
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
