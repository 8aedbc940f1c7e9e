/**
 * Writes synthetic Claude Code transcripts, line by line, the way Claude Code lays them out:
 * the common fields on every line, a `parentUuid` chain, one line per streamed content block
 * sharing `message.id` (each with `stop_reason: null`), one user line per tool result.
 * Everything is deterministic (uuids and timestamps count up), so tests can name lines.
 *
 *   const t = new Transcript({ sessionId: SID });
 *   t.prompt('fix the test');
 *   t.assistant([text('Looking.'), toolUse('toolu_1', 'Read', { file_path: 'a.ts' })]);
 *   t.toolResult('toolu_1', 'file contents');
 *   t.assistant([text('Done.')]);
 *   await writeFile(file, t.jsonl());
 */

export type Block = Record<string, unknown> & { type: string };

export const text = (t: string): Block => ({ type: 'text', text: t });
export const thinking = (t: string): Block => ({ type: 'thinking', thinking: t, signature: 'sig' });
export const toolUse = (id: string, name: string, input: Record<string, unknown>): Block => ({
  type: 'tool_use',
  id,
  name,
  input,
});

export interface TranscriptOptions {
  sessionId: string;
  cwd?: string;
  version?: string;
  /** ms since the epoch of the first line; each line is `stepMs` later than the one before. */
  start?: number;
  stepMs?: number;
  /** A sub-agent's transcript: every line `isSidechain: true` with this agent id. */
  agentId?: string;
  /** Makes uuids distinct between transcripts of one test. */
  salt?: number;
}

export interface AssistantOptions {
  id?: string;
  model?: string;
  /** Stop reason written on the last chunk (Claude Code usually writes null on every one). */
  stopReason?: string | null;
  usage?: { input_tokens?: number; output_tokens?: number; cache_read_input_tokens?: number };
  /** Extra fields on every line of the response. */
  extra?: Record<string, unknown>;
}

export class Transcript {
  readonly lines: string[] = [];
  private t: number;
  private n = 0;
  private last: string | null = null;
  private messages = 0;

  constructor(private readonly o: TranscriptOptions) {
    this.t = o.start ?? Date.UTC(2026, 0, 5, 9, 0, 0);
  }

  private uuid(): string {
    this.n++;
    const salt = (this.o.salt ?? 0).toString(16).padStart(4, '0');
    return `00000000-${salt}-4000-8000-${this.n.toString(16).padStart(12, '0')}`;
  }

  private tick(): string {
    const at = new Date(this.t).toISOString();
    this.t += this.o.stepMs ?? 1_000;
    return at;
  }

  /** Lets time pass (a long tool, a backoff) before the next line. */
  wait(ms: number): this {
    this.t += ms;
    return this;
  }

  /** A line with the common fields; returns its uuid. */
  line(fields: Record<string, unknown>): string {
    const uuid = this.uuid();
    const common = {
      parentUuid: this.last,
      isSidechain: this.o.agentId !== undefined,
      userType: 'external',
      cwd: this.o.cwd ?? '/work/demo',
      sessionId: this.o.sessionId,
      version: this.o.version ?? '2.1.0',
      gitBranch: 'main',
      ...(this.o.agentId ? { agentId: this.o.agentId } : {}),
    };
    this.lines.push(JSON.stringify({ ...common, ...fields, uuid, timestamp: this.tick() }));
    this.last = uuid;
    return uuid;
  }

  /** A line without the common fields (bookkeeping lines carry few of them). */
  bare(fields: Record<string, unknown>): this {
    this.lines.push(JSON.stringify(fields));
    return this;
  }

  /** Any text as a line, valid JSON or not. */
  raw(text: string): this {
    this.lines.push(text);
    return this;
  }

  user(content: string | Block[], extra: Record<string, unknown> = {}): string {
    return this.line({ type: 'user', message: { role: 'user', content }, ...extra });
  }

  prompt(textOfPrompt: string): string {
    return this.user(textOfPrompt);
  }

  /** One response, streamed: one line per block, all sharing one `message.id`. */
  assistant(blocks: Block[], opts: AssistantOptions = {}): string {
    this.messages++;
    const id = opts.id ?? `msg_${(this.o.salt ?? 0).toString(16)}_${this.messages}`;
    const usage = {
      input_tokens: 100,
      output_tokens: 20,
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
      ...opts.usage,
    };
    blocks.forEach((b, i) => {
      const lastChunk = i === blocks.length - 1;
      this.line({
        type: 'assistant',
        requestId: `req_${id}`,
        message: {
          id,
          type: 'message',
          role: 'assistant',
          model: opts.model ?? 'claude-sonnet-4-5-20250929',
          content: [b],
          stop_reason: lastChunk ? (opts.stopReason ?? null) : null,
          stop_sequence: null,
          usage,
        },
        ...opts.extra,
      });
    });
    return id;
  }

  toolResult(
    toolUseId: string,
    content: string | Block[],
    opts: { isError?: boolean; toolUseResult?: unknown } = {},
  ): string {
    return this.user(
      [{ type: 'tool_result', tool_use_id: toolUseId, content, ...(opts.isError ? { is_error: true } : {}) }],
      { toolUseResult: opts.toolUseResult ?? (typeof content === 'string' ? content : 'ok') },
    );
  }

  system(subtype: string, fields: Record<string, unknown> = {}): string {
    return this.line({ type: 'system', subtype, level: 'info', isMeta: false, ...fields });
  }

  /** `[Request interrupted by user…]`, as Claude Code appends it. */
  interrupt(forToolUse = false): string {
    return this.user([text(`[Request interrupted by user${forToolUse ? ' for tool use' : ''}]`)]);
  }

  compaction(
    summary: string,
    meta: { trigger?: string; preTokens?: number; postTokens?: number } = {},
  ): void {
    this.line({
      type: 'system',
      subtype: 'compact_boundary',
      content: 'Conversation compacted',
      level: 'info',
      parentUuid: null,
      logicalParentUuid: this.last,
      compactMetadata: { trigger: meta.trigger ?? 'auto', preTokens: meta.preTokens ?? 170_000, ...meta },
    });
    this.user(
      `This session is being continued from a previous conversation that ran out of context. ${summary}`,
      { isCompactSummary: true, isVisibleInTranscriptOnly: true },
    );
  }

  stopHookSummary(fields: { prevented?: boolean; stopReason?: string; command?: string } = {}): string {
    return this.system('stop_hook_summary', {
      hookCount: 1,
      hookInfos: [{ command: fields.command ?? 'npm test', durationMs: 1200 }],
      hookErrors: [],
      preventedContinuation: fields.prevented ?? false,
      stopReason: fields.stopReason ?? '',
      hasOutput: true,
      level: 'suggestion',
    });
  }

  jsonl(): string {
    return `${this.lines.join('\n')}\n`;
  }
}
