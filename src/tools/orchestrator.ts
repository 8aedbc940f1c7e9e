import type { ToolResultBlock, ToolUseBlock, Usage } from '../model/messages.ts';
import { admit, type Planned } from './admission.ts';
import { BatchStops, CallStops, type Outcome } from './batchStops.ts';
import type { ToolRegistry } from './registry.ts';
import type {
  AskUser,
  CanUseTool,
  FileReadFact,
  RunScope,
  ToolHooks,
  ToolOutput,
  ToolSessionView,
} from './types.ts';

export type ToolOutcome =
  | 'ok'
  | 'error'
  | 'denied'
  | 'invalid_input'
  | 'unknown_tool'
  | 'timeout'
  | 'interrupted';

export interface ToolCallReport {
  index: number;
  toolUseId: string;
  name: string;
  outcome: ToolOutcome;
  result: { content: ToolResultBlock['content']; isError: boolean };
  durationMs: number;
  filesRead?: FileReadFact[];
  synthetic?: boolean;
  /** Model usage the call spent (a sub-agent's), when it finished on its own. */
  usage?: Usage;
  /** The call has no result yet: its sub-agent (this session) parked on approvals. */
  parkedOn?: string;
}

export interface PermissionReport {
  toolUseId: string;
  name: string;
  decision: 'allow' | 'deny' | 'ask';
  resolved: 'allow' | 'deny';
  by: string;
  message?: string;
}

export interface HookReport {
  hook: 'PreToolUse' | 'PostToolUse';
  decision: 'allow' | 'deny' | 'continue' | 'error';
  reason?: string;
  toolUseId: string;
  durationMs: number;
}

export interface StartedCall {
  index: number;
  toolUseId: string;
  name: string;
  input: unknown;
  readOnly: boolean;
}

/** Where the orchestrator reports what happens; the runtime turns these into log records. */
export interface BatchObserver {
  onPermission?(report: PermissionReport): void;
  onHook?(report: HookReport): void;
  /** Called once, before any tool runs, with every call about to run (the write-ahead point). */
  beforeRun(calls: StartedCall[]): Promise<void>;
  onFinished(report: ToolCallReport): void;
}

/**
 * Durable approvals: an answer already given for a call (`reloop approve|deny`), looked up when
 * the policy says `ask`; and whether an `ask` nobody can answer parks the batch instead of
 * denying it.
 */
export interface ApprovalSource {
  decision(toolUseId: string): { allow: boolean; by: string; message?: string } | undefined;
  park: boolean;
}

/** A call the batch parked on, waiting for an approval (its own, or its sub-agent's). */
export interface ParkedToolCall {
  toolUseId: string;
  tool: string;
  input: unknown;
  message?: string;
  /** The sub-agent session whose approvals the call waits for (a `Task` call). */
  child?: string;
}

export interface BatchOptions {
  registry: ToolRegistry;
  toolUses: readonly ToolUseBlock[];
  signal: AbortSignal;
  cwd: string;
  session: ToolSessionView;
  /** The run the batch belongs to: what its calls start beyond the call (a background shell) is its. */
  run?: RunScope;
  canUseTool: CanUseTool;
  /** Absent in non-interactive runs: `ask` then resolves to deny, and the denial is recorded. */
  askUser?: AskUser;
  approvals?: ApprovalSource;
  hooks?: ToolHooks;
  defaultTimeoutMs?: number;
  /** Cap on one call's input (JSON bytes); larger calls are not run (`invalid_input`). Default 1 MiB. */
  maxInputBytes?: number;
  maxConcurrency?: number;
  now?: () => number;
  /**
   * Results already logged for calls of this batch (a parked batch resumed: the calls that ran
   * beside a sub-agent that parked). They are given back as they are: not admitted, not run,
   * not reported again.
   */
  answered?: ReadonlyMap<string, { content: unknown; isError: boolean }>;
}

export interface BatchResult {
  results: ToolResultBlock[];
  aborted: boolean;
  reports: ToolCallReport[];
  /**
   * Non-empty when the batch parked: then `results` is empty, and either nothing ran (calls that
   * wait for an approval) or every call ran except `Task` calls whose sub-agents parked (their
   * siblings' results are in `reports`, logged, and carried into the resumed batch).
   */
  parked: ParkedToolCall[];
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;

/**
 * Runs one batch of tool calls. Nothing here throws for a bad call: unknown tools, invalid
 * input, denials, thrown errors and timeouts become is_error results and the loop goes on.
 * Consecutive concurrency-safe calls run together (at most `maxConcurrency`), the rest one
 * by one; results come back in the order the model asked for them.
 */
export async function runToolBatch(opts: BatchOptions, observer: BatchObserver): Promise<BatchResult> {
  const now = opts.now ?? performanceNow;
  const reports: (ToolCallReport | undefined)[] = new Array(opts.toolUses.length);

  const planned: Planned[] = [];
  const parked: ParkedToolCall[] = [];
  for (const [index, use] of opts.toolUses.entries()) {
    if (opts.signal.aborted) break;
    const carried = opts.answered?.get(use.id);
    if (carried) {
      reports[index] = carriedReport(index, use, carried);
      continue;
    }
    const p = await admit(opts, observer, index, use, now);
    if ('outcome' in p) finish(reports, observer, p);
    else if ('parked' in p) parked.push(p.parked);
    else planned.push(p);
  }
  // Every call is admitted first, so one park asks about all of them at once; nothing runs.
  if (parked.length > 0 && !opts.signal.aborted) return { results: [], aborted: false, reports: [], parked };

  if (!opts.signal.aborted && planned.length > 0) {
    await observer.beforeRun(
      planned.map((p) => ({
        index: p.index,
        toolUseId: p.use.id,
        name: p.tool.name,
        input: p.input,
        readOnly: p.tool.isReadOnly,
      })),
    );
    const stops = new BatchStops(opts.signal);
    try {
      for (const group of concurrencyGroups(planned)) {
        if (opts.signal.aborted) break;
        const limit = Math.max(1, opts.maxConcurrency ?? 10);
        for (let i = 0; i < group.length && !opts.signal.aborted; i += limit) {
          if (group.length - i === 1) {
            // One call (the usual batch): no Promise.all around it.
            finish(reports, observer, await execute(opts, observer, group[i]!, now, stops));
            continue;
          }
          await Promise.all(
            group
              .slice(i, i + limit)
              .map(async (p) => finish(reports, observer, await execute(opts, observer, p, now, stops))),
          );
        }
      }
    } finally {
      stops.close();
    }
  }

  // A call whose sub-agent parked has no result: the batch parks on it (unless the run was
  // aborted meanwhile, then it is interrupted like any call cut short).
  const waiting: ParkedToolCall[] = [];
  for (const [index, use] of opts.toolUses.entries()) {
    const r = reports[index];
    if (!r?.parkedOn) continue;
    if (opts.signal.aborted) reports[index] = undefined;
    else waiting.push({ toolUseId: r.toolUseId, tool: r.name, input: use.input, child: r.parkedOn });
  }
  if (waiting.length > 0) {
    return {
      results: [],
      aborted: false,
      reports: reports.filter((r): r is ToolCallReport => r !== undefined && !r.parkedOn),
      parked: waiting,
    };
  }
  // Whatever did not run (abort) still gets a result, so every tool_use stays paired.
  for (const [index, use] of opts.toolUses.entries()) {
    if (!reports[index]) finish(reports, observer, interrupted(index, use));
  }
  const done = reports as ToolCallReport[];
  return {
    results: done.map((r) => {
      const block: ToolResultBlock = {
        type: 'tool_result',
        tool_use_id: r.toolUseId,
        content: r.result.content,
      };
      if (r.result.isError) block.is_error = true;
      return block;
    }),
    aborted: opts.signal.aborted,
    reports: done,
    parked: [],
  };
}

/*
 * Module-level helpers rather than closures in the per-call path: nothing is allocated for them
 * per call, and code run through tsx (tests, scripts) pays ~0.5 µs for every named closure.
 */

function performanceNow(): number {
  return performance.now();
}

function finish(reports: (ToolCallReport | undefined)[], observer: BatchObserver, r: ToolCallReport): void {
  reports[r.index] = r;
  // A parked call has no result to log; the batch parks on it.
  if (!r.parkedOn) observer.onFinished(r);
}

/** A result logged before the batch parked, given back as it was. */
function carriedReport(
  index: number,
  use: ToolUseBlock,
  result: { content: unknown; isError: boolean },
): ToolCallReport {
  return {
    index,
    toolUseId: use.id,
    name: use.name,
    outcome: result.isError ? 'error' : 'ok',
    result: { content: result.content as ToolResultBlock['content'], isError: result.isError },
    durationMs: 0,
  };
}

function callReport(
  p: Planned,
  t0: number,
  now: () => number,
  outcome: ToolOutcome,
  out: ToolOutput,
): ToolCallReport {
  return {
    index: p.index,
    toolUseId: p.use.id,
    name: p.tool.name,
    outcome,
    result: { content: out.content, isError: out.isError ?? outcome !== 'ok' },
    durationMs: Math.max(0, now() - t0),
    ...(out.filesRead?.length ? { filesRead: out.filesRead } : {}),
    ...(out.usage ? { usage: out.usage } : {}),
    ...(out.parkedOn ? { parkedOn: out.parkedOn } : {}),
  };
}

async function execute(
  opts: BatchOptions,
  observer: BatchObserver,
  p: Planned,
  now: () => number,
  batch: BatchStops,
): Promise<ToolCallReport> {
  const t0 = now();
  const timeoutMs = p.tool.timeoutMs ?? opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  const stops = new CallStops(performance.now() + timeoutMs);
  const ctx = {
    get signal() {
      return stops.signal;
    },
    cwd: opts.cwd,
    toolUseId: p.use.id,
    session: opts.session,
    run: opts.run,
  };
  try {
    // Whichever settles first wins: a tool that ignores its signal cannot hold the loop past
    // abort or timeout.
    const first = await new Promise<Outcome>((resolve, reject) => {
      stops.settle = resolve;
      batch.start(stops);
      // Aborted between two calls of the batch: this one is interrupted before it starts.
      if (!opts.signal.aborted) p.tool.call(p.input, ctx).then((out) => resolve({ out }), reject);
    });
    if (first === 'timeout') {
      return callReport(p, t0, now, 'timeout', {
        content: `${p.tool.name} timed out after ${timeoutMs} ms`,
        isError: true,
      });
    }
    if (first === 'interrupted')
      return { ...interrupted(p.index, p.use), durationMs: Math.max(0, now() - t0) };
    let out = first.out;
    // A sub-agent that parked has not finished: PostToolUse runs when it does.
    if (out.parkedOn) return callReport(p, t0, now, 'ok', out);
    if (opts.hooks?.postToolUse) {
      const h0 = now();
      try {
        const extra = await opts.hooks.postToolUse(
          { tool: p.tool, input: p.input, toolUseId: p.use.id, cwd: opts.cwd },
          out,
        );
        observer.onHook?.({
          hook: 'PostToolUse',
          decision: 'continue',
          toolUseId: p.use.id,
          durationMs: now() - h0,
        });
        if (extra?.additionalContext) out = withContext(out, extra.additionalContext);
      } catch (e) {
        observer.onHook?.({
          hook: 'PostToolUse',
          decision: 'error',
          reason: (e as Error).message,
          toolUseId: p.use.id,
          durationMs: now() - h0,
        });
      }
    }
    return callReport(p, t0, now, out.isError ? 'error' : 'ok', out);
  } catch (e) {
    return callReport(p, t0, now, 'error', {
      content: `${p.tool.name} failed: ${(e as Error)?.message ?? String(e)}`,
      isError: true,
    });
  } finally {
    batch.end(stops);
  }
}

function withContext(out: ToolOutput, extra: string): ToolOutput {
  const content =
    typeof out.content === 'string'
      ? `${out.content}\n\n${extra}`
      : [...out.content, { type: 'text' as const, text: extra }];
  return { ...out, content };
}

function interrupted(index: number, use: ToolUseBlock): ToolCallReport {
  return {
    index,
    toolUseId: use.id,
    name: use.name,
    outcome: 'interrupted',
    result: { content: `[interrupted] ${use.name} did not finish: the run was aborted`, isError: true },
    durationMs: 0,
    synthetic: true,
  };
}

/** Splits calls into runs of consecutive concurrency-safe calls (parallel) and single unsafe ones. */
function concurrencyGroups(planned: Planned[]): Planned[][] {
  const groups: Planned[][] = [];
  let safe: Planned[] = [];
  for (const p of planned) {
    let isSafe = false;
    try {
      isSafe = p.tool.isConcurrencySafe(p.input);
    } catch {
      isSafe = false;
    }
    if (isSafe) {
      safe.push(p);
      continue;
    }
    if (safe.length) groups.push(safe);
    safe = [];
    groups.push([p]);
  }
  if (safe.length) groups.push(safe);
  return groups;
}
