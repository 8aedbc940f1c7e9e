import { z } from 'zod';
import { MessageSchema, UsageSchema } from '../model/messages.ts';
import { ModelFailureSchema, ModelResponseSchema } from '../model/types.ts';

/**
 * The log format. One stream per session; every record is `{ v, seq, at, session, run, type, data, h }`.
 * Version history (one line each; readers accept every version in SUPPORTED_SCHEMA_VERSIONS):
 *   1 — first format.
 *   2 — content stored once: `message.appended` refers to the `model.responded` / `tool.finished`
 *       records it is made of, `compaction.finished` to its response and the number of messages
 *       kept, `tool.started` omits an input equal to its tool_use block's; every record is sealed
 *       by `h`, a hash chained over the records before it (src/store/seal.ts).
 *   2 — session.created may carry `parent` (a child's link) and `importedFrom` (a transcript
 *       import); new record `import.unmapped` (a transcript line the importer could not map).
 *   2 — sub-agents: `child.started` / `child.finished` records (the `Task` tool's child sessions).
 *   2 — durable approvals: `approval.requested` / `approval.decided` records, run status `paused`.
 *   2 — a sub-agent parked on approvals parks its parent: `approval.requested.child`.
 *   2 — every Claude Code hook event: `hook.decided.hook` takes each event's name, `decision` adds
 *       `ask`, and the record may say `matcher`, `source`, `output` (context that reached the
 *       model), `systemMessage` and `exitCode`; `tool.finished.outcome` adds `hook_blocked` (a
 *       PreToolUse hook blocked the call; older logs say `denied`); message origin `hook_context`.
 *   2 — MCP servers: `mcp.server` records (connected with its tool list, or `toolsFrom` the
 *       earlier record of that server with the same list; failed; skipped; closed).
 *   2 — CLAUDE.md memory: `memory.loaded` (once per run that reads memory: each file's path,
 *       source and content — or `filesFrom` the seq of the session's earlier record with the same
 *       files — and what was not read); replay takes the memory from it, never the disk.
 *   2 — recorded setup: `run.setup` (after a run's MCP servers started, before its first
 *       transition): the tools offered (name, description, input schema; or `toolsFrom` the seq
 *       of the earlier `run.setup` with the same list), the hooks, the permission mode and rules,
 *       the MCP servers and the memory files of the run (`memoryFrom`: the run's `memory.loaded`). The system prompt stays in
 *       `run.started.config.system`. Logs without it read, fold and verify as before.
 *   2 — manual compaction: `run.started.config.compactNow` (a `/compact` run) and
 *       `compaction.finished.mode` `manual`; absent / `auto`|`reactive` in every other log.
 */
export const CURRENT_SCHEMA_VERSION = 2;
export const SUPPORTED_SCHEMA_VERSIONS: readonly number[] = [1, 2];

/** `paused`: the run stopped to wait for an approval (awaiting_approval); resuming continues it. */
export const RunStatusSchema = z.enum(['completed', 'failed', 'aborted', 'paused']);
export type RunStatus = z.infer<typeof RunStatusSchema>;

const ToolResultPayloadSchema = z.object({
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  isError: z.boolean(),
});

const FileReadFactSchema = z.object({ path: z.string(), sha256: z.string(), mtimeMs: z.number() });

/** Effective settings of a run, recorded so replay re-drives the machine with the same limits. */
export const RunConfigSchema = z.object({
  model: z.string(),
  fallbackModel: z.string().nullable(),
  maxTurns: z.number().int().positive(),
  defaultMaxTokens: z.number().int().positive(),
  escalatedMaxTokens: z.number().int().positive(),
  maxTokensRecoveries: z.number().int().nonnegative(),
  maxTransportAttempts: z.number().int().positive(),
  overloadsBeforeFallback: z.number().int().positive(),
  contextWindow: z.number().int().positive(),
  autoCompactThreshold: z.number().int().positive(),
  autoCompactBreaker: z.number().int().positive(),
  stopHookBlockCap: z.number().int().positive(),
  maxBudgetUsd: z.number().positive().nullable(),
  maxBudgetTokens: z.number().int().positive().nullable(),
  system: z.string().optional(),
  /** A manual compaction run (`/compact`, `Session.compact()`): the history is summarised, nothing is sent. */
  compactNow: z.literal(true).optional(),
});
export type RunConfig = z.infer<typeof RunConfigSchema>;

export const MessageOriginSchema = z.enum([
  'user',
  'assistant',
  'tool_results',
  'max_tokens_continue',
  'stop_hook_feedback',
  'budget_continue',
  'max_turns_marker',
  'interrupted',
  'hook_context',
]);
export type MessageOrigin = z.infer<typeof MessageOriginSchema>;

const ModelPurposeSchema = z.enum(['turn', 'compaction']);

/** A reference to an earlier record of the same stream, by its seq. */
const Seq = z.number().int().positive();

/**
 * A child session's link to its parent: the session, run and `Task` call that started it.
 * `run` and `toolUseId` are null when unknown (an imported sub-agent whose Task call the
 * transcript does not name).
 */
export const ParentLinkSchema = z.object({
  session: z.string(),
  run: z.string().nullable(),
  toolUseId: z.string().nullable(),
  agent: z.string(),
  /** An imported compaction summariser: the parent's `compaction.finished` it produced. */
  compaction: z.object({ seq: z.number().int().positive() }).optional(),
});
export type ParentLink = z.infer<typeof ParentLinkSchema>;

/** Where an imported session came from (docs/import.md). */
export const ImportedFromSchema = z.object({
  format: z.literal('claude-code'),
  file: z.string(),
  /** The transcript's own session id (a sub-agent's is its parent's). */
  sessionId: z.string(),
  /** Claude Code version that wrote the transcript, when its lines say. */
  version: z.string().nullable(),
  /** Sub-agent transcripts: the agent id of the file name (`agent-<agentId>.jsonl`). */
  agentId: z.string().optional(),
  /** Size of the file when imported: a later import can tell that the transcript grew. */
  bytes: z.number().int().nonnegative(),
  /** Records the import wrote, this one included: a log shorter than that was cut short. */
  records: z.number().int().positive(),
  /** What became of the file's lines: bookkeeping lines are counted by type, not mapped. */
  lines: z.object({
    total: z.number().int().nonnegative(),
    bookkeeping: z.record(z.string(), z.number().int().nonnegative()),
    unmapped: z.number().int().nonnegative(),
    malformed: z.number().int().nonnegative(),
  }),
});
export type ImportedFrom = z.infer<typeof ImportedFromSchema>;

/** One tool as an MCP server listed it (tools/list), kept so the log says what the model was offered. */
const McpToolFactSchema = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: z.record(z.string(), z.unknown()),
  annotations: z
    .object({
      title: z.string().optional(),
      readOnlyHint: z.boolean().optional(),
      destructiveHint: z.boolean().optional(),
      idempotentHint: z.boolean().optional(),
      openWorldHint: z.boolean().optional(),
    })
    .optional(),
});
export type McpToolFact = z.infer<typeof McpToolFactSchema>;

const McpTransportSchema = z.enum(['stdio', 'http', 'sse', 'sdk']);

/** One tool as the model was offered it: what goes into the request's `tools`. */
export const SetupToolSchema = z.object({
  name: z.string(),
  description: z.string(),
  inputSchema: z.record(z.string(), z.unknown()),
});
export type SetupTool = z.infer<typeof SetupToolSchema>;

/** One hook in force (src/hooks/config.ts `describeHooks`). */
const SetupHookSchema = z.object({
  source: z.string(),
  event: z.string(),
  matcher: z.string().nullable(),
  command: z.string(),
  timeout: z.number().nullable(),
});

/** One permission rule in force: where it came from, what it does, its text. */
const SetupRuleSchema = z.object({
  source: z.string(),
  behavior: z.enum(['allow', 'deny', 'ask']),
  rule: z.string(),
});

/**
 * What decides the run's permissions beyond its rules: the mode (null: not one of the built-in
 * policy's), and whether a callback of the caller's decides (its decisions are logged, not its code).
 */
const SetupPermissionsSchema = z.object({
  mode: z.string().nullable(),
  rules: z.array(SetupRuleSchema),
  callback: z.boolean(),
});

const SetupMcpServerSchema = z.object({
  name: z.string(),
  transport: z.string(),
  source: z.string(),
  status: z.string(),
});

/** A memory file that went into the system prompt (CLAUDE.md and the like): where, and its hash. */
const SetupMemorySchema = z.looseObject({ path: z.string(), sha256: z.string().optional() });
const McpSourceSchema = z.enum(['project', 'flag', 'library', 'sdk']);

export const RecordDataSchemas = {
  'session.created': z.object({
    title: z.string().optional(),
    cwd: z.string().optional(),
    forkedFrom: z.object({ session: z.string(), seq: z.number().int().nonnegative() }).optional(),
    /** Set on a sub-agent's session: the session, run and `Task` call that started it. */
    parent: ParentLinkSchema.optional(),
    importedFrom: ImportedFromSchema.optional(),
  }),
  'run.started': z.object({
    config: RunConfigSchema,
    resumedFrom: z.string().optional(),
    autoCompactFailures: z.number().int().nonnegative(),
  }),
  /**
   * What the run offered the model besides its history (the system prompt is in
   * `run.started.config.system`): the tools — the list itself, or `toolsFrom` the seq of the
   * session's earlier `run.setup` whose list is the same — and the hooks, permission rules, MCP
   * servers and memory files in force. From this and the log every request can be rebuilt.
   */
  'run.setup': z
    .object({
      tools: z.array(SetupToolSchema).optional(),
      toolsFrom: Seq.optional(),
      hooks: z.array(SetupHookSchema),
      permissions: SetupPermissionsSchema,
      mcpServers: z.array(SetupMcpServerSchema),
      memory: z.array(SetupMemorySchema).optional(),
      /** The run's `memory.loaded` record (the CLAUDE.md memory it gave the model), when it read any. */
      memoryFrom: Seq.optional(),
    })
    .refine((d) => (d.tools === undefined) !== (d.toolsFrom === undefined), {
      message: 'needs exactly one of tools or toolsFrom',
    }),
  'user.message': z.object({ message: MessageSchema }),
  /**
   * A message the machine added to the history. v1 always holds `message`; v2 holds it only when
   * no earlier record has its content, and otherwise says where it comes from (src/store/refs.ts):
   * `response` (the content of that model.responded record, the run's latest; `partial`: without
   * its tool_use blocks) or `results` (one tool_result block per tool.finished record, in order).
   */
  'message.appended': z
    .object({
      message: MessageSchema.optional(),
      origin: MessageOriginSchema,
      response: Seq.optional(),
      partial: z.literal(true).optional(),
      results: z.array(Seq).min(1).optional(),
    })
    .refine(
      (d) =>
        (d.message !== undefined ? 1 : 0) +
          (d.response !== undefined ? 1 : 0) +
          (d.results !== undefined ? 1 : 0) ===
          1 &&
        (d.partial === undefined || d.response !== undefined),
      { message: 'needs exactly one of message, response or results (partial only with response)' },
    ),
  'model.requested': z.object({
    purpose: ModelPurposeSchema,
    model: z.string(),
    maxTokens: z.number().int().positive(),
    messageCount: z.number().int().nonnegative(),
    attempt: z.number().int().positive(),
  }),
  'model.responded': z.object({ purpose: ModelPurposeSchema, response: ModelResponseSchema }),
  'model.failed': z.object({ purpose: ModelPurposeSchema, failure: ModelFailureSchema }),
  'backoff.scheduled': z.object({
    attempt: z.number().int().positive(),
    delayMs: z.number().nonnegative(),
    retryAfterMs: z.number().nonnegative().optional(),
  }),
  'tool.started': z.object({
    toolUseId: z.string(),
    name: z.string(),
    /** v2: absent when it equals the input of the tool_use block in the run's latest response. */
    input: z.unknown().optional(),
    index: z.number().int().nonnegative(),
    readOnly: z.boolean(),
  }),
  'tool.finished': z.object({
    toolUseId: z.string(),
    name: z.string(),
    index: z.number().int().nonnegative(),
    outcome: z.enum([
      'ok',
      'error',
      'denied',
      'hook_blocked',
      'invalid_input',
      'unknown_tool',
      'timeout',
      'interrupted',
    ]),
    result: ToolResultPayloadSchema,
    durationMs: z.number().nonnegative(),
    filesRead: z.array(FileReadFactSchema).optional(),
    /** True when no tool ran: the result was made up to keep tool_use / tool_result paired. */
    synthetic: z.boolean().optional(),
  }),
  'permission.decided': z.object({
    toolUseId: z.string(),
    name: z.string(),
    decision: z.enum(['allow', 'deny', 'ask']),
    resolved: z.enum(['allow', 'deny']),
    by: z.string(),
    message: z.string().optional(),
  }),
  /**
   * One hook's answer (or the budget policy's, `Budget`). Replay never runs a hook: what the
   * chart did next is derived from these (docs/log-format.md says which field drives what).
   */
  'hook.decided': z.object({
    hook: z.enum([
      'Stop',
      'PreToolUse',
      'PostToolUse',
      'Budget',
      'PostToolUseFailure',
      'PermissionRequest',
      'UserPromptSubmit',
      'SessionStart',
      'SessionEnd',
      'SubagentStart',
      'SubagentStop',
      'PreCompact',
      'Notification',
    ]),
    decision: z.enum(['allow', 'block', 'prevent', 'continue', 'deny', 'ask', 'error']),
    reason: z.string().optional(),
    command: z.string().optional(),
    /** The matcher of the hook's group (absent: it matches everything). */
    matcher: z.string().optional(),
    /** Where the hook came from: a settings source (`projectSettings`, …), `cliArg`, `session`. */
    source: z.string().optional(),
    toolUseId: z.string().optional(),
    /** What of the hook's output reached the model as context. */
    output: z.string().optional(),
    /** A message the hook had shown to the user. */
    systemMessage: z.string().optional(),
    /** A command hook's exit code; null when it was killed, timed out or never started. */
    exitCode: z.number().int().nullable().optional(),
    durationMs: z.number().nonnegative(),
  }),
  /**
   * v1 holds the `summary` and the new history (`messages`); v2 holds the seq of the compaction
   * response the summary is read from, how many messages of the old history were `kept` verbatim
   * after the summary message, and the `tailTokens` budget that chose them.
   */
  'compaction.finished': z.discriminatedUnion('ok', [
    z
      .object({
        ok: z.literal(true),
        mode: z.enum(['auto', 'reactive', 'manual']),
        summary: z.string().optional(),
        messages: z.array(MessageSchema).optional(),
        response: Seq.optional(),
        kept: z.number().int().nonnegative().optional(),
        tailTokens: z.number().int().nonnegative().optional(),
        tokensBefore: z.number().int().nonnegative(),
        tokensAfter: z.number().int().nonnegative(),
      })
      .refine(
        (d) =>
          d.summary !== undefined && d.messages !== undefined
            ? d.response === undefined && d.kept === undefined
            : d.response !== undefined &&
              d.kept !== undefined &&
              d.summary === undefined &&
              d.messages === undefined,
        { message: 'needs summary and messages (v1) or response and kept (v2)' },
      ),
    z.object({ ok: z.literal(false), mode: z.enum(['auto', 'reactive', 'manual']), error: z.string() }),
  ]),
  /** Written durably by a `Task` call before its child session exists: resume finds the child by it. */
  'child.started': z.object({ toolUseId: z.string(), child: z.string(), agent: z.string() }),
  /** How the child's run ended, before its result goes back to the parent's model. */
  'child.finished': z.object({
    toolUseId: z.string(),
    child: z.string(),
    status: RunStatusSchema,
    reason: z.string(),
    /** Model turns of every run of the child. */
    turns: z.number().int().nonnegative(),
    /** Every model call of the child: it counts towards the parent's budget. */
    usage: UsageSchema,
    error: z.string().optional(),
  }),
  'abort.requested': z.object({ reason: z.string().optional() }),
  /** A tool call the policy says to ask about, with nobody attached to answer: the run parks on it. */
  'approval.requested': z.object({
    toolUseId: z.string(),
    tool: z.string(),
    input: z.unknown(),
    message: z.string().optional(),
    /**
     * A `Task` call whose sub-agent parked on approvals of its own: the call waits for that child
     * session (its calls are the ones approved or denied), not for an answer of its own.
     */
    child: z.string().optional(),
  }),
  /** Someone's answer to an approval request (`reloop approve|deny`), appended between runs. */
  'approval.decided': z.object({
    toolUseId: z.string(),
    decision: z.enum(['allow', 'deny']),
    by: z.string(),
    message: z.string().optional(),
  }),
  /**
   * What became of an MCP server of the session (src/mcp): connected (its version and its tools:
   * the list itself, or `toolsFrom` the seq of this server's earlier `connected` record whose list
   * is the same), failed to start, skipped (a project server nobody approved), or closed (it went
   * away while the session used it).
   */
  'mcp.server': z.discriminatedUnion('event', [
    z
      .object({
        event: z.literal('connected'),
        server: z.string(),
        transport: McpTransportSchema,
        source: McpSourceSchema,
        serverInfo: z.object({ name: z.string(), version: z.string() }).nullable(),
        tools: z.array(McpToolFactSchema).optional(),
        toolsFrom: Seq.optional(),
        durationMs: z.number().nonnegative(),
      })
      .refine((d) => (d.tools === undefined) !== (d.toolsFrom === undefined), {
        message: 'needs exactly one of tools or toolsFrom',
      }),
    z.object({
      event: z.literal('failed'),
      server: z.string(),
      transport: McpTransportSchema,
      source: McpSourceSchema,
      message: z.string(),
      durationMs: z.number().nonnegative(),
    }),
    z.object({
      event: z.literal('skipped'),
      server: z.string(),
      source: McpSourceSchema,
      message: z.string(),
    }),
    z.object({ event: z.literal('closed'), server: z.string(), message: z.string() }),
  ]),
  /** An effect of the runtime failed unexpectedly (not a model error, not an abort): the fact replay needs for runtime_error. */
  'actor.failed': z.object({ actor: z.string(), message: z.string() }),
  /**
   * The CLAUDE.md memory a run gave the model (in front of its first user turn), as read at the
   * run's start: each file in load order, an import after the file that imports it.
   */
  'memory.loaded': z
    .object({
      files: z
        .array(
          z.object({
            path: z.string(),
            source: z.enum(['user', 'project', 'local']),
            content: z.string(),
            importedBy: z.string().optional(),
          }),
        )
        .optional(),
      /** The seq of the session's earlier `memory.loaded` whose files are the same (read again, unchanged). */
      filesFrom: Seq.optional(),
      warnings: z.array(z.string()).optional(),
    })
    .refine((d) => (d.files === undefined) !== (d.filesFrom === undefined), {
      message: 'needs exactly one of files or filesFrom',
    }),
  transition: z.object({ from: z.string(), to: z.string(), trigger: z.string(), reason: z.string() }),
  /** A transcript line the importer could not map (or could not parse): kept, never dropped silently. */
  'import.unmapped': z.object({
    line: z.number().int().positive(),
    lineType: z.string(),
    why: z.string(),
    /** The line's text, clipped (docs/import.md). */
    text: z.string(),
  }),
  'run.ended': z.object({
    status: RunStatusSchema,
    reason: z.string(),
    turns: z.number().int().nonnegative(),
    usage: UsageSchema,
    error: z.string().optional(),
    /** Set when resume closed a run whose process died: the state it was in and what was in flight. */
    interrupted: z.object({ state: z.string(), inFlight: z.array(z.string()) }).optional(),
  }),
} as const;

export type RecordType = keyof typeof RecordDataSchemas;
export const RECORD_TYPES = Object.keys(RecordDataSchemas) as RecordType[];

export type RecordData<T extends RecordType> = z.infer<(typeof RecordDataSchemas)[T]>;

const envelope = {
  v: z.number().int(),
  seq: z.number().int().positive(),
  at: z.number(),
  session: z.string().min(1),
  run: z.string().nullable(),
};

/** The seal of a v2 record (src/store/seal.ts); set by the store, never by the writer. */
const Seal = z.string().regex(/^[A-Za-z0-9_-]{22}$/);

function recordSchema<T extends RecordType>(type: T) {
  return z.object({ ...envelope, type: z.literal(type), data: RecordDataSchemas[type], h: Seal.optional() });
}

export const LogRecordSchema = z.discriminatedUnion('type', [
  recordSchema('session.created'),
  recordSchema('run.started'),
  recordSchema('run.setup'),
  recordSchema('user.message'),
  recordSchema('message.appended'),
  recordSchema('model.requested'),
  recordSchema('model.responded'),
  recordSchema('model.failed'),
  recordSchema('backoff.scheduled'),
  recordSchema('tool.started'),
  recordSchema('tool.finished'),
  recordSchema('permission.decided'),
  recordSchema('hook.decided'),
  recordSchema('compaction.finished'),
  recordSchema('child.started'),
  recordSchema('child.finished'),
  recordSchema('abort.requested'),
  recordSchema('approval.requested'),
  recordSchema('approval.decided'),
  recordSchema('mcp.server'),
  recordSchema('actor.failed'),
  recordSchema('memory.loaded'),
  recordSchema('transition'),
  recordSchema('import.unmapped'),
  recordSchema('run.ended'),
]);

export type LogRecord = z.infer<typeof LogRecordSchema>;
export type RecordOf<T extends RecordType> = Extract<LogRecord, { type: T }>;

/** A record before the store gives it a place: no `seq`, no `session`, no seal. */
export type DraftRecord = {
  [T in RecordType]: { type: T; run: string | null; at: number; data: RecordData<T> };
}[RecordType];
