import type { Redactor } from '../lib/secrets.ts';
import { evolve } from '../store/evolve.ts';
import { type LogRecord, type ParentLink, RECORD_TYPES, type RecordOf } from '../store/records.ts';
import { emptySessionState, type SessionState } from '../store/sessionState.ts';
import { eventAttributes, modelErrorType, usageAttributes } from './attributes.ts';
import { ContentEncoder } from './content.ts';
import { chatSpanIdOf, runSpanIdOf, toolSpanIdOf, traceIdOf } from './ids.ts';
import { A, E, PROVIDER, R } from './semconv.ts';
import type { Attributes, SpanData, SpanSink } from './spanData.ts';

/** What a session's translator needs from the others of its tree: its parent's runs and calls. */
export interface SessionLookup {
  get(session: string): SessionTrace | undefined;
}

export interface TraceOptions {
  /** Record conversation content (opt-in), redacted by this redactor. */
  content?: { redactor: Redactor } | null;
}

/** What a call's events leave out on its own span: the span already says it. */
const CALL_FIELDS = new Set(['toolUseId', 'name', 'tool']);

/** Record types the fold knows (a newer writer's others only pass by). */
const KNOWN = new Set<string>(RECORD_TYPES);

interface OpenRun {
  id: string;
  span: SpanData;
  chat: SpanData | null;
  tools: Map<string, SpanData>;
  /** Calls whose span has ended in this run: a late record about one becomes a run event. */
  closed: Set<string>;
}

/**
 * Turns one session's records, in order, into spans (docs/otel.md): `invoke_agent` per run,
 * `chat` per model request, `execute_tool` per tool call, reloop's facts as span events. A span
 * is handed to the sink when its closing record arrives. It reads records only: the same log
 * gives the same spans live (fed from the session's record listener) and long after (fed from
 * the store). Record types and fields it does not know are ignored.
 */
export class SessionTrace {
  private link: ParentLink | null = null;
  private agent = 'reloop';
  private forkedFrom: string | null = null;
  private imported: string | null = null;
  private runs = 0;
  private run: OpenRun | null = null;
  private readonly traceOfRun = new Map<string, string>();
  /** The runs in which each call had a span, in order (a sub-agent's k-th run is its call's k-th). */
  private readonly executions = new Map<string, string[]>();
  /** Answers given between runs, waiting for the call's span in the run that resumes it. */
  private readonly decided = new Map<string, SpanData['events']>();
  private muted = false;
  private readonly encoder: ContentEncoder | null;
  private state: SessionState | null;

  constructor(
    readonly sessionId: string,
    private readonly sink: SpanSink,
    private readonly lookup: SessionLookup,
    options: TraceOptions = {},
  ) {
    this.encoder = options.content ? new ContentEncoder(options.content.redactor) : null;
    // Content needs the history as sent, which only the fold of the log knows.
    this.state = this.encoder ? emptySessionState() : null;
  }

  /** The records before this process attached: translated, but their spans are not handed on. */
  prime(records: Iterable<LogRecord>): void {
    this.muted = true;
    try {
      for (const r of records) this.push(r);
    } finally {
      this.muted = false;
    }
  }

  get openRunId(): string | null {
    return this.run?.id ?? null;
  }

  traceIdOfRun(run: string): string | undefined {
    return this.traceOfRun.get(run);
  }

  executionsOf(toolUseId: string): readonly string[] {
    return this.executions.get(toolUseId) ?? [];
  }

  push(r: LogRecord): void {
    if (this.state && KNOWN.has(r.type)) this.state = evolve(this.state, r);
    switch (r.type) {
      case 'session.created':
        this.created(r);
        return;
      case 'run.started':
        this.runStarted(r);
        return;
      case 'run.ended':
        this.runEnded(r);
        return;
      case 'model.requested':
        this.modelRequested(r);
        return;
      case 'model.responded':
        this.modelResponded(r);
        return;
      case 'model.failed':
        this.modelFailed(r);
        return;
      case 'tool.started':
        this.toolStarted(r);
        return;
      case 'tool.finished':
        this.toolFinished(r);
        return;
      case 'transition': {
        const d = r.data;
        // (The trigger, the effect's done/error event, is in the record at `seq`.)
        this.runEvent(r, E.transition, { from: d.from, to: d.to, reason: d.reason, seq: r.seq });
        return;
      }
      case 'permission.decided':
        this.toolEvent(r, r.data.toolUseId, E.permission, r.data.name);
        return;
      case 'approval.requested':
        this.toolEvent(r, r.data.toolUseId, E.approvalRequested, r.data.tool);
        return;
      case 'child.started':
        this.toolEvent(r, r.data.toolUseId, E.childStarted);
        return;
      case 'child.finished':
        this.toolEvent(r, r.data.toolUseId, E.childFinished);
        return;
      case 'hook.decided':
        if (r.data.toolUseId !== undefined) this.toolEvent(r, r.data.toolUseId, E.hook);
        else this.runEvent(r, E.hook, this.attrs(r));
        return;
      case 'approval.decided':
        this.approvalDecided(r);
        return;
      case 'backoff.scheduled':
        this.runEvent(r, E.backoff, this.attrs(r));
        return;
      case 'compaction.finished':
        this.runEvent(r, E.compaction, this.attrs(r));
        return;
      case 'abort.requested':
        this.runEvent(r, E.abort, this.attrs(r));
        return;
      case 'actor.failed':
        this.runEvent(r, E.actorFailed, this.attrs(r));
        return;
      case 'import.unmapped':
        this.runEvent(r, E.unmapped, this.attrs(r));
        return;
      default:
        // user.message, message.appended: content, read through the fold when opted in.
        return;
    }
  }

  private attrs(r: LogRecord, omit?: ReadonlySet<string>): Attributes {
    return eventAttributes(r.data, r.seq, this.encoder ? (v) => this.encoder!.value(v) : null, omit);
  }

  private created(r: RecordOf<'session.created'>): void {
    const d = r.data;
    this.link = d.parent ?? null;
    if (d.importedFrom) this.imported = d.importedFrom.format;
    // The agent: a sub-agent's from its link, an imported session is Claude Code's own.
    this.agent = d.parent?.agent ?? (d.importedFrom ? d.importedFrom.format : 'reloop');
    this.forkedFrom = d.forkedFrom?.session ?? null;
  }

  /** The span a run hangs under: a sub-agent's is its `Task` call in the run that ran it. */
  private parentOf(runIndex: number): { traceId: string; spanId: string } | null {
    const link = this.link;
    if (!link) return null;
    const parent = this.lookup.get(link.session);
    const traceOf = (run: string) => parent?.traceIdOfRun(run) ?? traceIdOf(link.session, run);
    if (link.toolUseId !== null) {
      const ran = parent?.executionsOf(link.toolUseId) ?? [];
      // Live, a call resumed after a crash has no record in the new run yet: it is that run's.
      const run = ran[runIndex] ?? parent?.openRunId ?? ran[ran.length - 1] ?? link.run;
      if (run) return { traceId: traceOf(run), spanId: toolSpanIdOf(link.session, run, link.toolUseId) };
    }
    if (link.run !== null) return { traceId: traceOf(link.run), spanId: runSpanIdOf(link.session, link.run) };
    return null;
  }

  private runStarted(r: RecordOf<'run.started'>): void {
    if (this.run) this.closeRun(r.at, r.seq, { status: 'aborted', reason: 'superseded' });
    const runId = r.run ?? `seq-${r.seq}`;
    const parent = this.parentOf(this.runs++);
    const traceId = parent?.traceId ?? traceIdOf(this.sessionId, runId);
    this.traceOfRun.set(runId, traceId);
    const c = r.data.config;
    const attributes: Attributes = {
      [A.operationName]: 'invoke_agent',
      [A.providerName]: PROVIDER,
      [A.agentName]: this.agent,
      [A.conversationId]: this.sessionId,
      [A.requestModel]: c.model,
      [A.requestMaxTokens]: c.defaultMaxTokens,
      [R.sessionId]: this.sessionId,
      [R.runId]: runId,
      [R.seq]: r.seq,
    };
    if (this.link) attributes[R.parentSession] = this.link.session;
    if (r.data.resumedFrom) attributes[R.resumedFrom] = r.data.resumedFrom;
    if (this.forkedFrom) attributes[R.forkedFrom] = this.forkedFrom;
    if (this.imported) attributes[R.imported] = this.imported;
    if (this.encoder && c.system)
      attributes[A.systemInstructions] = this.encoder.systemInstructions(c.system);
    const span: SpanData = {
      traceId,
      spanId: runSpanIdOf(this.sessionId, runId),
      parentSpanId: parent?.spanId ?? null,
      name: `invoke_agent ${this.agent}`,
      kind: 'internal',
      start: r.at,
      end: r.at,
      attributes,
      events: [],
      status: { code: 'unset' },
    };
    this.run = { id: runId, span, chat: null, tools: new Map(), closed: new Set() };
    this.started(span);
  }

  private runEnded(r: RecordOf<'run.ended'>): void {
    if (!this.owns(r)) return;
    const d = r.data;
    const a = this.run!.span.attributes;
    a[R.turns] = d.turns;
    usageAttributes(d.usage, a);
    if (d.error) a[R.error] = d.error;
    if (d.interrupted) a[R.interruptedState] = d.interrupted.state;
    this.closeRun(r.at, r.seq, d);
  }

  /** Ends the run and whatever of it is still open (a call parked, a request cut short). */
  private closeRun(at: number, seq: number, end: { status: string; reason: string; error?: string }): void {
    const run = this.run!;
    const unfinished = end.reason;
    if (run.chat) this.endChat(run.chat, at, seq, { code: 'error', type: unfinished });
    for (const [id, tool] of run.tools) {
      const parked = tool.events.some((e) => e.name === E.approvalRequested);
      tool.attributes[R.toolOutcome] = parked ? 'parked' : unfinished;
      this.endTool(run, id, tool, at, seq, parked ? null : unfinished);
    }
    const span = run.span;
    span.attributes[R.status] = end.status;
    span.attributes[R.reason] = end.reason;
    span.attributes[R.endSeq] = seq;
    if (end.status === 'failed' || end.status === 'aborted') {
      span.attributes[A.errorType] = end.reason;
      span.status = { code: 'error', message: end.error ?? end.reason };
    }
    span.end = at;
    this.run = null;
    this.ended(span);
  }

  private modelRequested(r: RecordOf<'model.requested'>): void {
    if (!this.owns(r)) return;
    const run = this.run!;
    if (run.chat) this.endChat(run.chat, r.at, r.seq, { code: 'error', type: 'superseded' });
    const d = r.data;
    const attributes: Attributes = {
      [A.operationName]: 'chat',
      [A.providerName]: PROVIDER,
      [A.requestModel]: d.model,
      [A.requestMaxTokens]: d.maxTokens,
      [A.conversationId]: this.sessionId,
      [R.sessionId]: this.sessionId,
      [R.seq]: r.seq,
      [R.purpose]: d.purpose,
      [R.attempt]: d.attempt,
      [R.messageCount]: d.messageCount,
    };
    if (this.encoder && this.state && d.purpose === 'turn') {
      attributes[A.inputMessages] = this.encoder.inputMessages(
        this.state.messages.view().slice(0, d.messageCount),
      );
    }
    run.chat = {
      traceId: run.span.traceId,
      spanId: chatSpanIdOf(this.sessionId, run.id, r.seq),
      parentSpanId: run.span.spanId,
      name: `chat ${d.model}`,
      kind: 'client',
      start: r.at,
      end: r.at,
      attributes,
      events: [],
      status: { code: 'unset' },
    };
    this.started(run.chat);
  }

  private modelResponded(r: RecordOf<'model.responded'>): void {
    const chat = this.owns(r) ? this.run!.chat : null;
    if (!chat) return;
    const res = r.data.response;
    const a = chat.attributes;
    a[A.responseId] = res.id;
    a[A.responseModel] = res.model;
    if (res.stopReason !== null) a[A.finishReasons] = [res.stopReason];
    usageAttributes(res.usage, a);
    if (this.encoder) a[A.outputMessages] = this.encoder.outputMessages(res.content, res.stopReason);
    this.endChat(chat, r.at, r.seq, null);
  }

  private modelFailed(r: RecordOf<'model.failed'>): void {
    const chat = this.owns(r) ? this.run!.chat : null;
    if (!chat) return;
    const f = r.data.failure;
    chat.attributes[R.failureKind] = f.kind;
    if (f.status !== undefined) chat.attributes[A.httpStatus] = f.status;
    this.endChat(chat, r.at, r.seq, { code: 'error', type: modelErrorType(f), message: f.message });
  }

  private endChat(
    chat: SpanData,
    at: number,
    seq: number,
    error: { code: 'error'; type: string; message?: string } | null,
  ): void {
    chat.attributes[R.endSeq] = seq;
    if (error) {
      chat.attributes[A.errorType] = error.type;
      chat.status = { code: 'error', message: error.message ?? error.type };
    }
    chat.end = at;
    this.run!.chat = null;
    this.ended(chat);
  }

  /** The span of a call in the open run, opened by the first record that names it. */
  private tool(r: LogRecord, toolUseId: string, name: string | undefined): SpanData | null {
    if (!this.owns(r)) return null;
    const run = this.run!;
    const open = run.tools.get(toolUseId);
    if (open) {
      if (name && open.attributes[A.toolName] === undefined) this.nameTool(open, name);
      return open;
    }
    if (run.closed.has(toolUseId)) return null;
    const attributes: Attributes = {
      [A.operationName]: 'execute_tool',
      [A.toolCallId]: toolUseId,
      [A.conversationId]: this.sessionId,
      [R.sessionId]: this.sessionId,
      [R.seq]: r.seq,
    };
    const span: SpanData = {
      traceId: run.span.traceId,
      spanId: toolSpanIdOf(this.sessionId, run.id, toolUseId),
      parentSpanId: run.span.spanId,
      name: 'execute_tool',
      kind: 'internal',
      start: r.at,
      end: r.at,
      attributes,
      events: [],
      status: { code: 'unset' },
    };
    if (name) this.nameTool(span, name);
    const earlier = this.decided.get(toolUseId);
    if (earlier) {
      span.events.push(...earlier);
      this.decided.delete(toolUseId);
    }
    run.tools.set(toolUseId, span);
    const ran = this.executions.get(toolUseId);
    if (!ran) this.executions.set(toolUseId, [run.id]);
    else if (ran[ran.length - 1] !== run.id) ran.push(run.id);
    this.started(span);
    return span;
  }

  private nameTool(span: SpanData, name: string): void {
    span.name = `execute_tool ${name}`;
    span.attributes[A.toolName] = name;
    // MCP tools (mcp__server__tool) run in another process: the conventions' `extension`.
    span.attributes[A.toolType] = name.startsWith('mcp__') ? 'extension' : 'function';
  }

  private toolEvent(r: LogRecord, toolUseId: string, event: string, name?: string): void {
    const span = this.tool(r, toolUseId, name);
    // On the call's own span its id and name are the span's; on the run's they say which call.
    if (span) span.events.push({ name: event, time: r.at, attributes: this.attrs(r, CALL_FIELDS) });
    else this.runEvent(r, event, this.attrs(r));
  }

  private toolStarted(r: RecordOf<'tool.started'>): void {
    const span = this.tool(r, r.data.toolUseId, r.data.name);
    if (!span) return;
    span.attributes[R.toolReadOnly] = r.data.readOnly;
    if (this.encoder) {
      const input = r.data.input ?? this.inputOf(r.data.toolUseId);
      if (input !== undefined) span.attributes[A.toolArguments] = this.encoder.value(input);
    }
  }

  /** A v2 `tool.started` leaves out an input equal to its tool_use block's. */
  private inputOf(toolUseId: string): unknown {
    const block = this.state?.lastResponse?.content.find((b) => b.type === 'tool_use' && b.id === toolUseId);
    return block?.type === 'tool_use' ? block.input : undefined;
  }

  private toolFinished(r: RecordOf<'tool.finished'>): void {
    const d = r.data;
    const span = this.tool(r, d.toolUseId, d.name);
    if (!span) return;
    const a = span.attributes;
    a[R.toolOutcome] = d.outcome;
    a[R.toolDurationMs] = d.durationMs;
    if (d.synthetic) a[R.toolSynthetic] = true;
    if (this.encoder) a[A.toolResult] = this.encoder.value(d.result.content);
    this.endTool(this.run!, d.toolUseId, span, r.at, r.seq, d.outcome === 'ok' ? null : d.outcome);
  }

  private endTool(
    run: OpenRun,
    id: string,
    span: SpanData,
    at: number,
    seq: number,
    errorType: string | null,
  ): void {
    span.attributes[R.endSeq] = seq;
    if (errorType) {
      span.attributes[A.errorType] = errorType;
      span.status = { code: 'error', message: errorType };
    }
    span.end = at;
    run.tools.delete(id);
    run.closed.add(id);
    this.ended(span);
  }

  private approvalDecided(r: RecordOf<'approval.decided'>): void {
    const attributes = this.attrs(r, CALL_FIELDS);
    const open = this.owns(r) ? this.run!.tools.get(r.data.toolUseId) : undefined;
    if (open) {
      open.events.push({ name: E.approvalDecided, time: r.at, attributes });
      return;
    }
    // Given between runs: it belongs to the call's span in the run that resumes it.
    const list = this.decided.get(r.data.toolUseId) ?? [];
    list.push({ name: E.approvalDecided, time: r.at, attributes });
    this.decided.set(r.data.toolUseId, list);
  }

  private runEvent(r: LogRecord, name: string, attributes: Attributes): void {
    if (!this.owns(r)) return;
    this.run!.span.events.push({ name, time: r.at, attributes });
  }

  /** Whether the record belongs to the open run (a record of no run, or of another, has no span). */
  private owns(r: LogRecord): boolean {
    return this.run !== null && r.run === this.run.id;
  }

  private started(span: SpanData): void {
    if (!this.muted) this.sink.start?.(span);
  }

  private ended(span: SpanData): void {
    if (!this.muted) this.sink.end(span);
  }
}
