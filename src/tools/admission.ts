import type { ToolUseBlock } from '../model/messages.ts';
import { DEFAULT_MAX_TOOL_INPUT_BYTES, formatBytes, inputExceeds } from './inputSize.ts';
import type {
  BatchObserver,
  BatchOptions,
  ParkedToolCall,
  ToolCallReport,
  ToolOutcome,
} from './orchestrator.ts';
import type { AnyTool, PermissionRequest, PermissionResult } from './types.ts';

/** A call admitted to run: its tool and the input it runs with (a hook or policy may rewrite it). */
export interface Planned {
  index: number;
  use: ToolUseBlock;
  tool: AnyTool;
  input: unknown;
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

/** Lookup, input validation, PreToolUse hook and permission: decides whether a call may run. */
export async function admit(
  opts: BatchOptions,
  observer: BatchObserver,
  index: number,
  use: ToolUseBlock,
  now: () => number,
): Promise<Planned | ToolCallReport | { parked: ParkedToolCall }> {
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
