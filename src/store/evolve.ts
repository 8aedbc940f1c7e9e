import { AppendOnlyList } from '../lib/appendOnlyList.ts';
import { todosOf } from '../lib/todos.ts';
import { addUsage, textOf, ZERO_USAGE } from '../model/messages.ts';
import { LogReferenceError } from './errors.ts';
import type { LogRecord, RecordOf } from './records.ts';
import { appendedMessage, compactedHistoryOf, startedInput } from './refs.ts';
import {
  EMPTY_MAP,
  type McpServerState,
  type RecordedSetup,
  type RunSummary,
  type SessionState,
} from './sessionState.ts';
import { turnAfter } from './turns.ts';

/**
 * A copy of `s` at a new position. Every field is listed, in `emptySessionState`'s order, so
 * every state shares one hidden class and the copy is a straight store of 20 fields: a
 * `{ ...state }` spread of this many keys costs V8 ~1 µs (bench/micro/evolve.ts). The type
 * makes a new SessionState field a compile error here.
 */
function copyState(s: SessionState, lastSeq: number, lastAt: number): SessionState {
  return {
    id: s.id,
    title: s.title,
    createdAt: s.createdAt,
    cwd: s.cwd,
    forkedFrom: s.forkedFrom,
    lastSeq,
    lastAt,
    messages: s.messages,
    usage: s.usage,
    denials: s.denials,
    filesRead: s.filesRead,
    runs: s.runs,
    currentRun: s.currentRun,
    modelInFlight: s.modelInFlight,
    toolsInFlight: s.toolsInFlight,
    unappendedResults: s.unappendedResults,
    lastResponse: s.lastResponse,
    autoCompactFailures: s.autoCompactFailures,
    compactions: s.compactions,
    transitions: s.transitions,
    approvals: s.approvals,
    mcpServers: s.mcpServers,
    todos: s.todos,
    setup: s.setup,
    memory: s.memory,
  };
}

/** A copy of a run summary, every field listed in one order (same reason as `copyState`). */
function copyRun(r: RunSummary): RunSummary {
  return {
    id: r.id,
    startedSeq: r.startedSeq,
    endedSeq: r.endedSeq,
    status: r.status,
    reason: r.reason,
    turns: r.turns,
    usage: r.usage,
    state: r.state,
    config: r.config,
    resumedFrom: r.resumedFrom,
  };
}

/** The tool whose successful calls set the session's todo list (src/tools/builtin/todoWrite.ts). */
const TODO_WRITE = 'TodoWrite';

/*
 * The maps keyed by toolUseId change every tool round, each time with a brand-new key. Plain
 * objects would grow V8's hidden-class tree by one map per key ever seen (measured ~2 µs per
 * record and steady GC pressure over a long run); a Map copy of the few entries in flight is
 * constant cost. Copies, never mutation: states already handed out keep their maps.
 */
function withEntry<T>(m: ReadonlyMap<string, T>, key: string, value: T): ReadonlyMap<string, T> {
  const next = new Map(m);
  next.set(key, value);
  return next;
}

function withoutEntry<T>(m: ReadonlyMap<string, T>, key: string): ReadonlyMap<string, T> {
  if (!m.has(key)) return m;
  const next = new Map(m);
  next.delete(key);
  return next;
}

/**
 * The fold of the log into session state. Pure: it never mutates `state` (lists are
 * AppendOnlyLists, so sharing is safe) and reads nothing but its arguments. O(1) per record
 * except compaction, which replaces the history. A v2 reference that does not resolve
 * (src/store/refs.ts) throws LogReferenceError naming the record.
 */
export function evolve(state: SessionState, record: LogRecord): SessionState {
  const s = copyState(state, record.seq, record.at);
  switch (record.type) {
    case 'session.created':
      s.id = record.session;
      s.createdAt = record.at;
      s.title = record.data.title ?? s.title;
      s.cwd = record.data.cwd ?? null;
      s.forkedFrom = record.data.forkedFrom ?? null;
      return s;
    case 'run.started':
      s.id ??= record.session;
      s.currentRun = {
        id: record.run ?? '',
        startedSeq: record.seq,
        endedSeq: null,
        status: 'running',
        reason: null,
        turns: 0,
        usage: ZERO_USAGE,
        state: 'building',
        config: record.data.config,
        resumedFrom: record.data.resumedFrom ?? null,
      };
      s.modelInFlight = false;
      s.toolsInFlight = EMPTY_MAP;
      return s;
    case 'user.message':
      s.messages = s.messages.append(record.data.message);
      s.unappendedResults = EMPTY_MAP;
      if (!s.title) s.title = textOf(record.data.message.content).replace(/\s+/g, ' ').trim().slice(0, 80);
      return s;
    case 'message.appended':
      s.messages = s.messages.append(appendedMessage(state, record));
      s.unappendedResults = EMPTY_MAP;
      return s;
    case 'model.requested':
      s.modelInFlight = true;
      return s;
    case 'model.responded':
      s.modelInFlight = false;
      s.lastResponse = { seq: record.seq, content: record.data.response.content };
      s.usage = addUsage(s.usage, record.data.response.usage);
      if (state.currentRun) {
        const run = copyRun(state.currentRun);
        run.usage = addUsage(run.usage, record.data.response.usage);
        s.currentRun = run;
      }
      return s;
    case 'model.failed':
      s.modelInFlight = false;
      return s;
    case 'backoff.scheduled':
    case 'hook.decided':
    case 'abort.requested':
    case 'actor.failed':
    case 'import.unmapped':
      return s;
    case 'tool.started':
      s.toolsInFlight = withEntry(s.toolsInFlight, record.data.toolUseId, {
        toolUseId: record.data.toolUseId,
        name: record.data.name,
        input: startedInput(state, record),
        readOnly: record.data.readOnly,
        index: record.data.index,
      });
      return s;
    case 'tool.finished': {
      if (record.data.name === TODO_WRITE && record.data.outcome === 'ok') {
        // The list is the input the call ran with (logged by tool.started, rewrites included).
        const items = todosOf(s.toolsInFlight.get(record.data.toolUseId)?.input);
        if (items) s.todos = { seq: record.seq, items };
      }
      s.toolsInFlight = withoutEntry(s.toolsInFlight, record.data.toolUseId);
      s.unappendedResults = withEntry(s.unappendedResults, record.data.toolUseId, {
        seq: record.seq,
        toolUseId: record.data.toolUseId,
        content: record.data.result.content,
        isError: record.data.result.isError,
      });
      const facts = record.data.filesRead;
      if (facts?.length) {
        const next = { ...s.filesRead };
        for (const f of facts) next[f.path] = { ...f, seq: record.seq };
        s.filesRead = next;
      }
      return s;
    }
    case 'approval.requested': {
      const known = s.approvals.get(record.data.toolUseId);
      if (known && !known.decision) return s;
      s.approvals = withEntry(s.approvals, record.data.toolUseId, {
        toolUseId: record.data.toolUseId,
        tool: record.data.tool,
        input: record.data.input,
        message: record.data.message,
        seq: record.seq,
        at: record.at,
        decision: null,
        child: record.data.child,
      });
      return s;
    }
    case 'approval.decided': {
      const asked = s.approvals.get(record.data.toolUseId);
      if (!asked) return s;
      s.approvals = withEntry(s.approvals, record.data.toolUseId, {
        ...asked,
        decision: {
          allow: record.data.decision === 'allow',
          by: record.data.by,
          message: record.data.message,
          seq: record.seq,
          at: record.at,
        },
      });
      return s;
    }
    case 'child.started': {
      const tool = s.toolsInFlight.get(record.data.toolUseId);
      if (tool) {
        s.toolsInFlight = withEntry(s.toolsInFlight, tool.toolUseId, {
          ...tool,
          child: { session: record.data.child, agent: record.data.agent },
        });
      }
      return s;
    }
    case 'child.finished':
      // A sub-agent's model calls are the parent's spending too (its budget counts them).
      s.usage = addUsage(s.usage, record.data.usage);
      if (state.currentRun) {
        const run = copyRun(state.currentRun);
        run.usage = addUsage(run.usage, record.data.usage);
        s.currentRun = run;
      }
      return s;
    case 'run.setup':
      s.setup = setupAfter(state, record);
      return s;
    case 'memory.loaded':
      s.memory = memoryAfter(state, record);
      return s;
    case 'mcp.server':
      s.mcpServers = withEntry(s.mcpServers, record.data.server, mcpServerAfter(state, record));
      return s;
    case 'permission.decided':
      if (record.data.resolved === 'deny') {
        s.denials = s.denials.append({
          seq: record.seq,
          toolUseId: record.data.toolUseId,
          name: record.data.name,
          by: record.data.by,
          message: record.data.message,
        });
      }
      return s;
    case 'compaction.finished':
      if (record.data.ok) {
        s.messages = AppendOnlyList.from(compactedHistoryOf(state, record));
        s.compactions = state.compactions + 1;
        if (record.data.mode === 'auto') s.autoCompactFailures = 0;
      } else if (record.data.mode === 'auto') {
        s.autoCompactFailures = state.autoCompactFailures + 1;
      }
      return s;
    case 'transition':
      s.transitions = state.transitions + 1;
      if (state.currentRun) {
        const run = copyRun(state.currentRun);
        run.state = record.data.to;
        run.turns = turnAfter(run.turns === 0 ? 1 : run.turns, record.data.reason);
        s.currentRun = run;
      }
      return s;
    case 'run.ended': {
      const run = s.currentRun;
      if (run) {
        const ended = copyRun(run);
        ended.endedSeq = record.seq;
        ended.status = record.data.status;
        ended.reason = record.data.reason;
        ended.turns = record.data.turns;
        s.runs = s.runs.append(ended);
      }
      s.currentRun = null;
      s.modelInFlight = false;
      s.toolsInFlight = EMPTY_MAP;
      // A prompt a UserPromptSubmit hook blocked is erased from the history (the log keeps it).
      if (record.data.reason === 'prompt_blocked' && s.messages.last()?.role === 'user')
        s.messages = AppendOnlyList.from(s.messages.view().slice(0, -1));
      // A run closed by resume keeps its logged results: the resumed run appends them (and v2
      // refers to them), so they are still "logged, not yet in the history". So does a run that
      // parked: the calls of its batch that did run (beside a sub-agent that parked) are not run
      // again when it resumes, their logged results are carried into the resumed batch.
      if (!record.data.interrupted && record.data.status !== 'paused') s.unappendedResults = EMPTY_MAP;
      return s;
    }
    default: {
      const never: never = record;
      throw new Error(`evolve: unhandled record ${JSON.stringify(never)}`);
    }
  }
}

/** The session's setup after a `run.setup`; a `toolsFrom` that does not resolve throws. */
function setupAfter(state: SessionState, record: RecordOf<'run.setup'>): RecordedSetup {
  const { tools, toolsFrom, ...rest } = record.data;
  const base = { ...rest, seq: record.seq, run: record.run };
  if (tools) return { ...base, tools, toolsSeq: record.seq };
  const known = state.setup;
  if (!known || known.toolsSeq !== toolsFrom) {
    throw new LogReferenceError(
      record.session,
      record.seq,
      `run.setup toolsFrom ${toolsFrom} is not the record holding the session's tool list` +
        (known ? ` (that is seq ${known.toolsSeq})` : ' (no earlier list)'),
    );
  }
  return { ...base, tools: known.tools, toolsSeq: known.toolsSeq };
}

/** The session's memory after a `memory.loaded`; a `filesFrom` that does not resolve throws. */
function memoryAfter(state: SessionState, record: RecordOf<'memory.loaded'>): SessionState['memory'] {
  const { files, filesFrom } = record.data;
  if (files) return { seq: record.seq, files };
  const known = state.memory;
  if (!known || known.seq !== filesFrom) {
    throw new LogReferenceError(
      record.session,
      record.seq,
      `memory.loaded filesFrom ${filesFrom} is not the record holding the session's memory files` +
        (known ? ` (that is seq ${known.seq})` : ' (no earlier files)'),
    );
  }
  return known;
}

/** A server's state after one of its `mcp.server` records; a `toolsFrom` that does not resolve throws. */
function mcpServerAfter(state: SessionState, record: RecordOf<'mcp.server'>): McpServerState {
  const d = record.data;
  const known = state.mcpServers.get(d.server);
  const base = {
    server: d.server,
    seq: record.seq,
    serverInfo: known?.serverInfo ?? null,
    tools: known?.tools ?? [],
    toolsSeq: known?.toolsSeq ?? null,
    message: undefined as string | undefined,
  };
  switch (d.event) {
    case 'connected': {
      if (d.tools)
        return {
          ...base,
          status: 'connected',
          serverInfo: d.serverInfo,
          tools: d.tools,
          toolsSeq: record.seq,
        };
      if (!known || known.toolsSeq !== d.toolsFrom) {
        throw new LogReferenceError(
          record.session,
          record.seq,
          `mcp.server toolsFrom ${d.toolsFrom} is not the record holding server ${JSON.stringify(d.server)}'s tool list` +
            (known?.toolsSeq ? ` (that is seq ${known.toolsSeq})` : ' (no earlier list)'),
        );
      }
      return { ...base, status: 'connected', serverInfo: d.serverInfo };
    }
    case 'failed':
    case 'skipped':
    case 'closed':
      return { ...base, status: d.event, message: d.message };
  }
}

/** Folds records into state. */
export function fold(records: Iterable<LogRecord>, initial: SessionState): SessionState {
  let s = initial;
  for (const r of records) s = evolve(s, r);
  return s;
}
