import type { ToolUseBlock } from '../model/messages.ts';
import { DEFAULT_MAX_TOOL_INPUT_BYTES, formatBytes, inputExceeds } from './inputSize.ts';
import type {
  BatchObserver,
  BatchOptions,
  ParkedToolCall,
  ToolCallReport,
  ToolOutcome,
} from './orchestrator.ts';
import type { AnyTool, HookReport, PermissionRequest, PermissionResult, ToolHookVerdict } from './types.ts';

/** A call admitted to run: its tool and the input it runs with (a hook or policy may rewrite it). */
export interface Planned {
  index: number;
  use: ToolUseBlock;
  tool: AnyTool;
  input: unknown;
  /** What hooks said for the model before it ran: appended to its result. */
  notes?: string;
}

export function failed(index: number, use: ToolUseBlock, outcome: ToolOutcome, text: string): ToolCallReport {
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

/** The outcome of one admission: run it, its result (not run), or park it. */
export type Admission = Planned | ToolCallReport | { parked: ParkedToolCall };

/** Lookup, input validation, PreToolUse hook and permission: decides whether a call may run. */
export async function admit(
  opts: BatchOptions,
  observer: BatchObserver,
  index: number,
  use: ToolUseBlock,
  now: () => number,
): Promise<Admission> {
  const tool = opts.registry.get(use.name);
  if (!tool) {
    const why = opts.registry.unavailable(use.name);
    if (why) return failed(index, use, 'unknown_tool', `${use.name} is not available: ${why}`);
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
  const call: Call = { index, use, tool, input: parsed.data, notes: [] };
  const hook = await preToolUse(opts, observer, call, now);
  if (hook && 'outcome' in hook) return hook;
  return permit(opts, observer, call, hook, now);
}

/** A call on its way through admission: its input as rewritten so far, the hooks' notes. */
interface Call {
  index: number;
  use: ToolUseBlock;
  tool: AnyTool;
  input: unknown;
  notes: string[];
}

const request = (c: Call, cwd: string): PermissionRequest => permissionRequest(c.tool, c.input, c.use, cwd);

/**
 * Asks one hook API of a call and logs its answer: the records it brings, or one made by
 * `recordOf` (the first hook API brings none). An API that throws is logged as an error and
 * decides nothing.
 */
export async function askHook<T extends { records?: readonly HookReport[] }>(
  observer: BatchObserver,
  hook: string,
  toolUseId: string,
  now: () => number,
  run: () => Promise<T | undefined>,
  recordOf: (answer: T | undefined, durationMs: number) => HookReport | null,
): Promise<T | undefined> {
  const t0 = now();
  try {
    const v = await run();
    const one = v?.records ? null : recordOf(v, now() - t0);
    for (const r of v?.records ?? (one ? [one] : [])) observer.onHook?.(r);
    return v;
  } catch (e) {
    observer.onHook?.({
      hook,
      decision: 'error',
      reason: (e as Error).message,
      toolUseId,
      durationMs: now() - t0,
    });
    return undefined;
  }
}

/** A tool hook's verdict, asked and logged (a verdict without records is one record). */
function ask<T extends ToolHookVerdict>(
  observer: BatchObserver,
  hook: string,
  toolUseId: string,
  now: () => number,
  run: () => Promise<T | undefined>,
): Promise<T | undefined> {
  return askHook(observer, hook, toolUseId, now, run, (v, durationMs) =>
    v
      ? {
          hook,
          decision: v.decision,
          ...(v.reason !== undefined ? { reason: v.reason } : {}),
          toolUseId,
          durationMs,
        }
      : null,
  );
}

function withNotes(r: ToolCallReport, notes: readonly string[], stop?: string): ToolCallReport {
  const text = notes.join('\n\n');
  const content = text ? appendText(r.result.content, text) : r.result.content;
  return { ...r, result: { ...r.result, content }, ...(stop !== undefined ? { stopRun: stop } : {}) };
}

/** PreToolUse: a block ends admission here (hook_blocked); otherwise its decision goes on. */
async function preToolUse(
  opts: BatchOptions,
  observer: BatchObserver,
  c: Call,
  now: () => number,
): Promise<ToolHookVerdict | ToolCallReport | undefined> {
  const hooks = opts.hooks;
  if (!hooks?.preToolUse) return undefined;
  const d = await ask(observer, 'PreToolUse', c.use.id, now, () => hooks.preToolUse!(request(c, opts.cwd)));
  if (!d) return undefined;
  if (d.notes) c.notes.push(d.notes);
  if (d.stop !== undefined)
    return withNotes(
      failed(c.index, c.use, 'hook_blocked', `Stopped by PreToolUse hook: ${d.stop}`),
      c.notes,
      d.stop,
    );
  if (d.decision === 'deny') {
    const why = `Denied by PreToolUse hook: ${d.reason ?? 'no reason given'}`;
    return withNotes(failed(c.index, c.use, 'hook_blocked', why), c.notes);
  }
  if (d.updatedInput !== undefined) {
    const again = rewritten(c.tool, d.updatedInput, 'the PreToolUse hook', c.index, c.use);
    if ('outcome' in again) return withNotes(again, c.notes);
    c.input = again.input;
  }
  return d;
}

/** Whether the policy's ask comes from the mode alone (the only ask a hook's allow may skip). */
const modeOnly = (p: PermissionResult) => p.behavior === 'ask' && (p.by ?? '').startsWith('mode:');

/**
 * The permission policy, with what the PreToolUse hook said: any deny of the policy stands; an
 * ask stands unless it came from the mode alone and the hook allowed the call; a hook's ask asks
 * even what the policy allows. An ask then goes to PermissionRequest hooks, to an answer given
 * before (durable approvals), to the user, or parks the call.
 */
async function permit(
  opts: BatchOptions,
  observer: BatchObserver,
  c: Call,
  hook: ToolHookVerdict | undefined,
  now: () => number,
): Promise<Admission> {
  const { tool, use } = c;
  const policy = await opts.canUseTool(request(c, opts.cwd));
  let decided: PermissionResult = policy;
  if (policy.behavior === 'ask' && hook?.decision === 'allow' && modeOnly(policy)) {
    decided = { behavior: 'allow', by: hook.by ?? 'hook PreToolUse' };
  } else if (policy.behavior === 'allow' && hook?.decision === 'ask') {
    decided = {
      behavior: 'ask',
      message: hook.reason ?? `Allow ${tool.name}?`,
      by: hook.by ?? 'hook PreToolUse',
    };
  }
  let resolved: 'allow' | 'deny' = decided.behavior === 'allow' ? 'allow' : 'deny';
  let by = decided.by ?? 'canUseTool';
  let message = decided.behavior === 'allow' ? undefined : decided.message;
  let stop: string | undefined;
  const answered = decided.behavior === 'ask' ? opts.approvals?.decision(use.id) : undefined;
  if (answered) {
    resolved = answered.allow ? 'allow' : 'deny';
    by = answered.by;
    message = answered.message;
  } else if (decided.behavior === 'ask') {
    const hookAsked = hook?.decision === 'ask' && decided !== policy;
    const pr = await askPermissionHooks(opts, observer, c, decided, modeOnly(decided) || hookAsked, now);
    if (pr && 'outcome' in pr) return pr;
    if (pr) {
      resolved = pr.resolved;
      by = pr.by;
      message = pr.message;
      stop = pr.stop;
    } else {
      const note = await notify(opts, observer, c, now);
      if (note?.stop !== undefined) {
        resolved = 'deny';
        by = note.by ?? 'hook Notification';
        message = note.stop;
        stop = note.stop;
      } else if (!opts.askUser && opts.approvals?.park) {
        return {
          parked: { toolUseId: use.id, tool: tool.name, input: c.input, ...(message ? { message } : {}) },
        };
      } else if (opts.askUser) {
        const answer = await opts.askUser(request(c, opts.cwd), decided.message);
        const allow = typeof answer === 'boolean' ? answer : answer.allow;
        resolved = allow ? 'allow' : 'deny';
        by = 'user';
        // A "no, because …": the reason is what the model is told (and what the log keeps).
        if (!allow && typeof answer === 'object' && answer.message) message = answer.message;
      } else {
        by = 'noninteractive';
      }
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
      by === 'noninteractive'
        ? `Permission to use ${tool.name} needs approval, and this run cannot ask anyone (non-interactive)`
        : `Permission to use ${tool.name} was denied${message ? `: ${message}` : ''}`;
    return withNotes(failed(c.index, use, 'denied', why), c.notes, stop);
  }
  if (decided.behavior === 'allow' && decided.updatedInput !== undefined) {
    const again = rewritten(tool, decided.updatedInput, `the permission decision (${by})`, c.index, use);
    if ('outcome' in again) return withNotes(again, c.notes);
    c.input = again.input;
  }
  return {
    index: c.index,
    use,
    tool,
    input: c.input,
    ...(c.notes.length ? { notes: c.notes.join('\n\n') } : {}),
  };
}

interface Resolution {
  resolved: 'allow' | 'deny';
  by: string;
  message?: string;
  stop?: string;
}

/**
 * PermissionRequest hooks, as the call is about to be asked about. A deny denies it (`interrupt`
 * also stops the run); an allow answers an ask that came from the mode or from a PreToolUse
 * hook, never one a rule or a protected path made. An allow's updatedInput is checked by the
 * policy again: its deny stands, and so does an ask that is not the mode's.
 */
async function askPermissionHooks(
  opts: BatchOptions,
  observer: BatchObserver,
  c: Call,
  asked: PermissionResult,
  answerable: boolean,
  now: () => number,
): Promise<Resolution | ToolCallReport | undefined> {
  const hooks = opts.hooks;
  if (!hooks?.permissionRequest) return undefined;
  const message = asked.behavior === 'ask' ? asked.message : undefined;
  const v = await ask(observer, 'PermissionRequest', c.use.id, now, () =>
    hooks.permissionRequest!(request(c, opts.cwd), { ...(message ? { message } : {}) }),
  );
  if (!v) return undefined;
  if (v.notes) c.notes.push(v.notes);
  const by = v.by ?? 'hook PermissionRequest';
  if (v.stop !== undefined) return { resolved: 'deny', by, message: v.stop, stop: v.stop };
  if (v.decision === 'deny') return { resolved: 'deny', by, ...(v.reason ? { message: v.reason } : {}) };
  if (v.decision !== 'allow' || !answerable) return undefined;
  if (v.updatedInput !== undefined) {
    const again = rewritten(c.tool, v.updatedInput, 'the PermissionRequest hook', c.index, c.use);
    if ('outcome' in again) return withNotes(again, c.notes);
    const recheck = await opts.canUseTool(permissionRequest(c.tool, again.input, c.use, opts.cwd));
    if (recheck.behavior === 'deny')
      return { resolved: 'deny', by: recheck.by ?? 'canUseTool', message: recheck.message };
    if (recheck.behavior === 'ask' && !modeOnly(recheck)) return undefined;
    c.input = again.input;
  }
  return { resolved: 'allow', by };
}

/** Notification (permission_prompt): someone is about to be asked, or the run parks on the call. */
async function notify(
  opts: BatchOptions,
  observer: BatchObserver,
  c: Call,
  now: () => number,
): Promise<ToolHookVerdict | undefined> {
  const hooks = opts.hooks;
  if (!hooks?.notify || (!opts.askUser && !opts.approvals?.park)) return undefined;
  const v = await ask(observer, 'Notification', c.use.id, now, () =>
    hooks.notify!(request(c, opts.cwd), {
      type: 'permission_prompt',
      message: `Claude needs your permission to use ${c.tool.name}`,
      title: 'Permission needed',
    }),
  );
  if (v?.notes) c.notes.push(v.notes);
  return v;
}

/** `text` after a result's content (a string, or blocks: then one more text block). */
export function appendText(
  content: ToolCallReport['result']['content'],
  text: string,
): ToolCallReport['result']['content'] {
  if (typeof content === 'string') return content ? `${content}\n\n${text}` : text;
  return [...content, { type: 'text' as const, text }];
}
