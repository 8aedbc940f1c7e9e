import { z } from 'zod';
import { toolCallNotes } from '../hooks/folds.ts';
import type { Message } from '../model/messages.ts';
import { decideApproval } from '../runtime/approvals.ts';
import type { RunSettings } from '../runtime/config.ts';
import { counterIds, seededRandom, VirtualClock } from '../runtime/determinism.ts';
import { Session, type SessionOptions } from '../runtime/session.ts';
import { MemoryEventStore } from '../store/memoryStore.ts';
import type { LogRecord, RecordOf, RecordType, RunConfig } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { ToolRegistry } from '../tools/registry.ts';
import type { AnyTool, ToolOutput } from '../tools/types.ts';
import { type DivergenceKind, firstDifference, type RerunDivergence, readableDiff } from './divergence.ts';
import { RecordedModelClient } from './recordedModel.ts';

/** `rerun`'s options: what `Session.create` takes (the model excepted: it is the recording), and how tools run. */
export interface RerunOptions extends Partial<Omit<SessionOptions, 'model' | 'store'>> {
  /** Where the rerun's own session is written (default: a fresh memory store). */
  store?: EventStore;
  /**
   * `live` (default): the tools given run, as they are today. `recorded`: every call is answered
   * with the result the log holds for it (policy, hooks, prompt and chart still run live); with
   * no `tools` given, the tools are the ones the log's setup offered. MCP tools are answered from
   * the log too: `mcpServers` is ignored and no server is started; their definitions are the setup's.
   */
  toolMode?: 'live' | 'recorded';
  /** The settings of each run, from the config that run recorded (the CLI keeps recorded limits). */
  settingsFor?: (recorded: RunConfig) => RunSettings;
}

export interface RerunReport {
  /** The current code made the same requests and the same decisions, and every run ended the same. */
  identical: boolean;
  divergence: RerunDivergence | null;
  /** Model turns answered from the recording. */
  turns: number;
  /** The divergence's two values as a line diff (`-` recorded, `+` current); null when identical. */
  diff: string | null;
  /** The rerun's own log (its session on `store`). */
  records: LogRecord[];
}

/** The records a rerun compares, by the kind a difference in them is, and what of them is compared. */
const COMPARED: Partial<Record<RecordType, DivergenceKind>> = {
  transition: 'transition',
  'tool.finished': 'tool_result',
  'permission.decided': 'permission',
  'approval.requested': 'permission',
  'hook.decided': 'hook',
  'run.ended': 'end',
};

/** The part of a record the current code must reproduce: no clock, no durations, no ids of runs. */
function compared(r: LogRecord, root?: string): unknown {
  switch (r.type) {
    case 'tool.finished': {
      const { durationMs: _d, filesRead, ...rest } = r.data;
      // A file's hash is what was read; its mtime is when, and its path is under the session's
      // directory (a scratch copy has another): compared relative to it.
      const where = (p: string) => (root && p.startsWith(`${root}/`) ? `./${p.slice(root.length + 1)}` : p);
      return filesRead
        ? { ...rest, filesRead: filesRead.map((f) => ({ path: where(f.path), sha256: f.sha256 })) }
        : rest;
    }
    case 'hook.decided': {
      const { durationMs: _d, ...rest } = r.data;
      return rest;
    }
    case 'run.ended': {
      const { status, reason, turns, error } = r.data;
      return { status, reason, turns, ...(error !== undefined ? { error } : {}) };
    }
    default:
      return r.data;
  }
}

const CONTINUE_TEXT = 'Continue where you left off.';

interface RecordedRun {
  start: RecordOf<'run.started'>;
  /** What `submit` is given: the run's prompt, or null (a continuation). */
  prompt: Message | null;
  /** Answers to approvals logged between the previous run and this one. */
  approvals: RecordOf<'approval.decided'>[];
}

function runsOf(records: readonly LogRecord[]): RecordedRun[] {
  const runs: RecordedRun[] = [];
  let approvals: RecordOf<'approval.decided'>[] = [];
  let open: RecordedRun | null = null;
  let transitions = 0;
  for (const r of records) {
    if (r.type === 'run.started') {
      open = { start: r, prompt: null, approvals };
      approvals = [];
      transitions = 0;
      runs.push(open);
    } else if (r.type === 'approval.decided') approvals.push(r);
    else if (r.type === 'transition') transitions++;
    else if (r.type === 'user.message' && open && transitions === 0 && open.prompt === null) {
      const m = r.data.message;
      // The runtime's own nudge when a continued history ends on the model's answer: submit(null) says it again.
      if (!(typeof m.content === 'string' && m.content === CONTINUE_TEXT)) open.prompt = m;
    } else if (r.type === 'run.ended' && r.run === open?.start.run) open = null;
  }
  return runs;
}

/** The tools answered from the log: each call gets the result recorded for its tool_use id. */
function recordedTools(
  records: readonly LogRecord[],
  given: SessionOptions['tools'],
): { tools: AnyTool[]; mcp: AnyTool[] } {
  const results = new Map<string, RecordOf<'tool.finished'>['data']>();
  const readOnly = new Map<string, boolean>();
  const hooks = new Map<string, RecordOf<'hook.decided'>['data'][]>();
  for (const r of records) {
    if (r.type === 'tool.finished' && !results.has(r.data.toolUseId)) results.set(r.data.toolUseId, r.data);
    if (r.type === 'tool.started') readOnly.set(r.data.name, r.data.readOnly);
    if (r.type === 'hook.decided' && r.data.toolUseId !== undefined) {
      const list = hooks.get(r.data.toolUseId) ?? [];
      list.push(r.data);
      hooks.set(r.data.toolUseId, list);
    }
  }
  const base: AnyTool[] =
    given instanceof ToolRegistry
      ? given.names().map((n) => given.get(n)!)
      : given
        ? [...given]
        : offeredTools(records, readOnly);
  // No MCP server is started: its tools are the ones the log's setup offered, answered by the log too
  // (registered where the servers' would be: see `mcpToolsFromLog`).
  const mcp = given ? offeredTools(records, readOnly).filter((t) => isMcpTool(t.name)) : [];
  const names = new Set(base.map((t) => t.name));
  const answered = (tool: AnyTool): AnyTool => {
    const call = async (_input: unknown, ctx: { toolUseId: string }): Promise<ToolOutput> => {
      const f = results.get(ctx.toolUseId);
      if (!f) return { content: `rerun: the log holds no result of ${ctx.toolUseId}`, isError: true };
      return {
        // What the tool returned: the hooks' notes the log holds with it are added again by the hooks.
        content: withoutNotes(
          f.result.content as ToolOutput['content'],
          toolCallNotes(hooks.get(ctx.toolUseId) ?? []),
        ),
        isError: f.result.isError,
        ...(f.filesRead ? { filesRead: f.filesRead } : {}),
      };
    };
    // The tool itself stays (its prototype too: class-based tools keep their methods); only the call is the log's.
    return Object.assign(Object.create(tool) as AnyTool, { call });
  };
  return { tools: base.map(answered), mcp: mcp.filter((t) => !names.has(t.name)).map(answered) };
}

/** A result as its tool gave it: the hooks' notes (context, feedback) appended after it taken off. */
function withoutNotes(content: ToolOutput['content'], notes: string | undefined): ToolOutput['content'] {
  if (notes === undefined) return content;
  if (typeof content === 'string') {
    if (content === notes) return '';
    return content.endsWith(`\n\n${notes}`) ? content.slice(0, -(notes.length + 2)) : content;
  }
  const last = content.at(-1);
  return last?.type === 'text' && last.text === notes ? content.slice(0, -1) : content;
}

const isMcpTool = (name: string) => name.startsWith('mcp__');

/** The tools the log's first setup offered, as tools whose calls the log answers. */
function offeredTools(records: readonly LogRecord[], readOnly: ReadonlyMap<string, boolean>): AnyTool[] {
  const setup = records.find(
    (r): r is RecordOf<'run.setup'> => r.type === 'run.setup' && r.data.tools !== undefined,
  );
  return (setup?.data.tools ?? []).map((t) => {
    const ro = readOnly.get(t.name) ?? false;
    return {
      name: t.name,
      description: t.description,
      inputSchema: z.unknown(),
      jsonSchema: t.inputSchema,
      isReadOnly: ro,
      isConcurrencySafe: () => ro,
      call: async () => ({ content: '', isError: true }),
    };
  });
}

/**
 * Reruns a recorded session with the current code: the chart runs live with the tools, policy,
 * hooks, system prompt and compaction given in `options`, and only the model is answered from
 * the recording, turn by turn. Each request the current code builds is compared with the recorded
 * one (rebuilt from the log's setup and history), and each decision it logs — tool results,
 * permissions, hooks, transitions, each run's end — with the recorded one; the first difference
 * is reported (its recorded seq, kind, path, both values, a readable diff) and the rerun stops there.
 */
export async function rerun(records: Iterable<LogRecord>, options: RerunOptions = {}): Promise<RerunReport> {
  const log = Array.isArray(records) ? (records as LogRecord[]) : [...records];
  const { toolMode = 'live', settingsFor, store: given, ...optionsGiven } = options;
  // Recorded tools: MCP calls are answered from the log as well, so no server is started (replay never needs one).
  const { mcpServers: _m, mcpLimits: _l, ...withoutMcp } = optionsGiven;
  const sessionOptions: typeof optionsGiven = toolMode === 'recorded' ? withoutMcp : optionsGiven;
  const store = given ?? new MemoryEventStore();
  const expected = log.filter((r) => r.run !== null && COMPARED[r.type] !== undefined);
  const created = log[0]?.type === 'session.created' ? log[0].data : {};
  const recordedRoot = created.cwd;
  const currentRoot = sessionOptions.cwd ?? created.cwd;
  const was = (r: LogRecord) => compared(r, recordedRoot);
  const now = (r: LogRecord) => compared(r, currentRoot);
  let divergence: RerunDivergence | null = null;
  let diff: string | null = null;
  let session: Session | null = null;
  let at = 0;

  const diverge = (d: RerunDivergence, text?: string) => {
    if (divergence) return;
    divergence = d;
    diff = text ?? readableDiff(d.recorded, d.current);
    // Not from inside the writer's listener: the abort is a record of its own.
    queueMicrotask(() => session?.abort('rerun: diverged from the recording'));
  };

  const compare = (r: LogRecord) => {
    if (divergence || r.run === null) return;
    const kind = COMPARED[r.type];
    if (!kind) return;
    const exp = expected[at];
    if (!exp) {
      const last = log.at(-1);
      diverge({ seq: last?.seq ?? 0, kind, path: r.type, recorded: null, current: now(r) });
      return;
    }
    if (exp.type !== r.type) {
      const k = exp.type === 'run.ended' ? kind : COMPARED[exp.type]!;
      diverge({
        seq: exp.seq,
        kind: k,
        path: '',
        recorded: { type: exp.type, data: was(exp) },
        current: { type: r.type, data: now(r) },
      });
      return;
    }
    const d = firstDifference(was(exp), now(r));
    if (d) {
      diverge(
        { seq: exp.seq, kind, path: d.path, recorded: d.recorded, current: d.current },
        readableDiff(was(exp), now(r)),
      );
      return;
    }
    at++;
  };

  const recorded = toolMode === 'recorded' ? recordedTools(log, sessionOptions.tools) : null;
  const model = new RecordedModelClient(log, { onMismatch: (d, text) => diverge(d, text) });
  const listener = sessionOptions.onRecord;
  const opts: SessionOptions = {
    ...sessionOptions,
    store,
    model,
    ...(recorded ? { tools: recorded.tools, mcpToolsFromLog: recorded.mcp } : {}),
    clock: sessionOptions.clock ?? new VirtualClock(log[0]?.at),
    random: sessionOptions.random ?? seededRandom(1),
    ids: sessionOptions.ids ?? counterIds('rerun_'),
    ...((sessionOptions.cwd ?? created.cwd) ? { cwd: sessionOptions.cwd ?? created.cwd } : {}),
    ...((sessionOptions.title ?? created.title) ? { title: sessionOptions.title ?? created.title } : {}),
    onRecord: (r, state) => {
      compare(r);
      listener?.(r, state);
    },
  };
  session = await Session.create(opts);
  // The options object the session holds: each run's settings are set on it before the run.
  let current = opts;
  try {
    for (const run of runsOf(log)) {
      if (divergence) break;
      for (const a of run.approvals) {
        try {
          await decideApproval(store, session.id, a.data.toolUseId, {
            allow: a.data.decision === 'allow',
            by: a.data.by,
            ...(a.data.message ? { message: a.data.message } : {}),
          });
        } catch {
          // The current code did not park on that call: the recorded answer has nothing to answer.
          diverge({ seq: a.seq, kind: 'permission', path: 'toolUseId', recorded: a.data, current: null });
        }
      }
      if (divergence) break;
      // The session was written to between runs (approvals): it is opened again to see them.
      if (run.approvals.length > 0) {
        current = { ...opts, acceptSetupChange: true };
        session = await Session.open(session.id, current);
      }
      if (settingsFor) current.settings = settingsFor(run.start.data.config);
      await session.submit(run.prompt);
    }
    // Let an abort queued by the last comparison land before the log is read.
    await Promise.resolve();
    if (!divergence && at < expected.length) {
      const exp = expected[at]!;
      diverge({
        seq: exp.seq,
        kind: COMPARED[exp.type]!,
        path: exp.type,
        recorded: was(exp),
        current: null,
      });
    }
  } finally {
    await session.close();
  }
  const out: LogRecord[] = [];
  for await (const r of store.read(session.id)) out.push(r);
  return { identical: divergence === null, divergence, turns: model.turns, diff, records: out };
}
