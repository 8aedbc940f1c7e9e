import type { ToolResultBlock, ToolUseBlock, Usage } from '../model/messages.ts';
import { DEFAULT_MAX_TOOL_INPUT_BYTES, formatBytes, inputExceeds } from './inputSize.ts';
import type { ToolRegistry } from './registry.ts';
import type {
  AnyTool,
  AskUser,
  CanUseTool,
  FileReadFact,
  PermissionRequest,
  PermissionResult,
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

/** A call the batch parked on, waiting for an approval. */
export interface ParkedToolCall {
  toolUseId: string;
  tool: string;
  input: unknown;
  message?: string;
}

export interface BatchOptions {
  registry: ToolRegistry;
  toolUses: readonly ToolUseBlock[];
  signal: AbortSignal;
  cwd: string;
  session: ToolSessionView;
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
}

export interface BatchResult {
  results: ToolResultBlock[];
  aborted: boolean;
  reports: ToolCallReport[];
  /** Non-empty when the batch parked: then nothing ran and `results` is empty. */
  parked: ParkedToolCall[];
}

interface Planned {
  index: number;
  use: ToolUseBlock;
  tool: AnyTool;
  input: unknown;
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
  observer.onFinished(r);
}

function failed(index: number, use: ToolUseBlock, outcome: ToolOutcome, text: string): ToolCallReport {
  return {
    index,
    toolUseId: use.id,
    name: use.name,
    outcome,
    result: { content: text, isError: true },
    durationMs: 0,
  };
}

function permissionRequest(tool: AnyTool, input: unknown, use: ToolUseBlock, cwd: string): PermissionRequest {
  return { tool, input, toolUseId: use.id, cwd };
}

/** Lookup, input validation, PreToolUse hook and permission: decides whether a call may run. */
function issuesOf(error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] }): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(input)'}: ${i.message}`).join('; ');
}

/** An input rewritten by a hook or a permission policy meets the same schema as the model's. */
function rewritten(
  tool: AnyTool,
  updated: unknown,
  by: string,
  index: number,
  use: ToolUseBlock,
): { input: unknown } | ToolCallReport {
  const again = tool.inputSchema.safeParse(updated);
  if (again.success) return { input: again.data };
  return failed(
    index,
    use,
    'invalid_input',
    `Invalid input for ${tool.name} from ${by}'s updatedInput: ${issuesOf(again.error)}`,
  );
}

async function admit(
  opts: BatchOptions,
  observer: BatchObserver,
  index: number,
  use: ToolUseBlock,
  now: () => number,
): Promise<Planned | ToolCallReport | { parked: ParkedToolCall }> {
  const tool = opts.registry.get(use.name);
  if (!tool) {
    return failed(
      index,
      use,
      'unknown_tool',
      `No such tool: ${use.name}. Available tools: ${opts.registry.names().join(', ') || '(none)'}`,
    );
  }
  const cap = opts.maxInputBytes ?? DEFAULT_MAX_TOOL_INPUT_BYTES;
  if (inputExceeds(use.input, cap)) {
    const size = Buffer.byteLength(JSON.stringify(use.input ?? null));
    return failed(
      index,
      use,
      'invalid_input',
      `Input for ${tool.name} is ${formatBytes(size)}, over the ${formatBytes(cap)} limit for one tool call: it was not run. Do the work in smaller calls.`,
    );
  }
  const parsed = tool.inputSchema.safeParse(use.input);
  if (!parsed.success) {
    return failed(index, use, 'invalid_input', `Invalid input for ${tool.name}: ${issuesOf(parsed.error)}`);
  }
  let input: unknown = parsed.data;
  let hookAllowed = false;
  if (opts.hooks?.preToolUse) {
    const t0 = now();
    try {
      const d = await opts.hooks.preToolUse(permissionRequest(tool, input, use, opts.cwd));
      observer.onHook?.({
        hook: 'PreToolUse',
        decision: d.decision,
        reason: d.reason,
        toolUseId: use.id,
        durationMs: now() - t0,
      });
      if (d.decision === 'deny')
        return failed(index, use, 'denied', `Denied by PreToolUse hook: ${d.reason ?? 'no reason given'}`);
      if (d.updatedInput !== undefined) {
        const again = rewritten(tool, d.updatedInput, 'the PreToolUse hook', index, use);
        if ('outcome' in again) return again;
        input = again.input;
      }
      hookAllowed = d.decision === 'allow';
    } catch (e) {
      observer.onHook?.({
        hook: 'PreToolUse',
        decision: 'error',
        reason: (e as Error).message,
        toolUseId: use.id,
        durationMs: now() - t0,
      });
    }
  }

  const decided: PermissionResult = hookAllowed
    ? { behavior: 'allow', by: 'hook:PreToolUse' }
    : await opts.canUseTool(permissionRequest(tool, input, use, opts.cwd));
  let resolved: 'allow' | 'deny' = decided.behavior === 'allow' ? 'allow' : 'deny';
  let by = decided.by ?? 'canUseTool';
  let message = decided.behavior === 'allow' ? undefined : decided.message;
  const answered = decided.behavior === 'ask' ? opts.approvals?.decision(use.id) : undefined;
  if (answered) {
    resolved = answered.allow ? 'allow' : 'deny';
    by = answered.by;
    message = answered.message;
  } else if (decided.behavior === 'ask') {
    if (!opts.askUser && opts.approvals?.park) {
      return {
        parked: { toolUseId: use.id, tool: tool.name, input, ...(message ? { message } : {}) },
      };
    }
    if (opts.askUser) {
      resolved = (await opts.askUser(permissionRequest(tool, input, use, opts.cwd), decided.message))
        ? 'allow'
        : 'deny';
      by = 'user';
    } else {
      by = 'noninteractive';
    }
  }
  observer.onPermission?.({
    toolUseId: use.id,
    name: tool.name,
    decision: decided.behavior,
    resolved,
    by,
    message,
  });
  if (resolved === 'deny') {
    const why =
      decided.behavior === 'ask' && !opts.askUser && !answered
        ? `Permission to use ${tool.name} needs approval, and this run cannot ask anyone (non-interactive)`
        : `Permission to use ${tool.name} was denied${message ? `: ${message}` : ''}`;
    return failed(index, use, 'denied', why);
  }
  if (decided.behavior === 'allow' && decided.updatedInput !== undefined) {
    const again = rewritten(tool, decided.updatedInput, `the permission decision (${by})`, index, use);
    if ('outcome' in again) return again;
    input = again.input;
  }
  return { index, use, tool, input };
}

/** What ended a call first: its tool's output, or one of its stops. */
type Outcome = { out: ToolOutput } | 'timeout' | 'interrupted';

/**
 * The two things that can end a call before its tool answers: its timeout and the run's abort.
 * Either one settles the call's outcome and aborts the tool's signal (the run's reason, or
 * `Error('timeout')`).
 *
 * The tool's signal is made on first read: Node's AbortSignal costs ~4 µs to make and ~5 µs more
 * to listen on, and Read, Write and Edit never look at theirs. Read after a stop, it is made
 * already aborted, with the same reason.
 */
class CallStops {
  private controller: AbortController | undefined;
  private stopped = false;
  private reason: unknown;
  settle: (outcome: Outcome) => void = ignore;

  /** `deadline`: when the call times out, in `performance.now()` ms. */
  constructor(readonly deadline: number) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.stopped) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  stop(why: 'timeout' | 'interrupted', reason: unknown): void {
    if (this.stopped) return;
    this.stopped = true;
    this.reason = reason;
    this.settle(why);
    this.controller?.abort(reason);
  }
}

/**
 * The stops of one batch: one listener on the run's signal and one timer for all its calls,
 * instead of one of each per call. The timer is armed for the earliest deadline of the calls
 * running; when it fires it stops the calls that are due and re-arms for the next. A call that
 * ends leaves the timer alone (a later call's deadline is later), so a batch of calls run one
 * after another arms it once. The object is the listener itself (`handleEvent`), so the batch
 * makes no closures for it.
 */
class BatchStops {
  private readonly running = new Set<CallStops>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly run: AbortSignal) {
    run.addEventListener('abort', this, { once: true });
  }

  start(call: CallStops): void {
    this.running.add(call);
    if (this.run.aborted) call.stop('interrupted', this.run.reason);
    else if (call.deadline < this.timerAt) this.arm(call.deadline);
  }

  end(call: CallStops): void {
    this.running.delete(call);
  }

  /** The run's signal fired: every running call is interrupted. */
  handleEvent(): void {
    for (const call of this.running) call.stop('interrupted', this.run.reason);
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.run.removeEventListener('abort', this);
  }

  private arm(at: number): void {
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(timeUp, Math.max(0, at - performance.now()), this);
  }

  /** The timer fired: stop the calls that are due, re-arm for the next deadline. */
  due(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const call of this.running) {
      // Node's timers keep whole milliseconds: a call less than 1 ms short of its deadline is due.
      if (call.deadline <= now + 1)
        call.stop(this.run.aborted ? 'interrupted' : 'timeout', new Error('timeout'));
      else next = Math.min(next, call.deadline);
    }
    if (next !== Number.POSITIVE_INFINITY) this.arm(next);
  }
}

function ignore(): void {}

function timeUp(stops: BatchStops): void {
  stops.due();
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
