/**
 * The translator (records → spans) on its own and through the library: golden logs from before
 * tracing existed, a live session on a TracerProvider against the export of its log (the same
 * spans), a provider without reloop's id generator (the tree still right), a sub-agent resumed
 * after a crash (its run under the call of the run that resumed it), records it does not know,
 * and content only when asked for, redacted.
 */
import { readFileSync } from 'node:fs';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  CollectingSink,
  exportSessions,
  logIdGenerator,
  type SpanData,
  TracerSink,
  TraceTree,
  toolSpanIdOf,
} from 'reloop/otel';
import { describe, expect, it } from 'vitest';
import { AgentCatalog } from '../../src/agents/index.ts';
import { Redactor } from '../../src/lib/secrets.ts';
import { decideApproval } from '../../src/runtime/approvals.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { parentSession, taskTurn } from '../runtime/children/support.ts';
import { askForGuarded, counted } from '../runtime/reasons/reasonSpec.ts';
import { echoTool } from '../support/harness.ts';

const GOLDEN = ['v1-tools-retry-recovery', 'v1-compaction-stophook', 'v1-abort-refusal-maxturns', 'v1-demo'];

function golden(name: string): LogRecord[] {
  const text = readFileSync(new URL(`../fixtures/logs/${name}.jsonl`, import.meta.url), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LogRecord);
}

function translate(records: readonly LogRecord[], tree = new TraceTree(new CollectingSink())): SpanData[] {
  const trace = tree.attach(records[0]!.session);
  for (const r of records) trace.push(r);
  return (tree.sink as CollectingSink).spans;
}

describe('golden logs (written before tracing existed)', () => {
  for (const name of GOLDEN) {
    it(`${name}: one invoke_agent root per run, every request and call under it, every transition an event`, () => {
      const records = golden(name);
      const spans = translate(records);
      const runs = spans.filter((s) => s.name === 'invoke_agent reloop');
      expect(runs).toHaveLength(records.filter((r) => r.type === 'run.started').length);
      expect(runs.every((r) => r.parentSpanId === null)).toBe(true);
      const ids = new Map(spans.map((s) => [s.spanId, s]));
      expect(ids.size).toBe(spans.length);
      for (const s of spans.filter((x) => x.parentSpanId !== null)) {
        const parent = ids.get(s.parentSpanId!)!;
        expect(parent.name).toBe('invoke_agent reloop');
        expect(s.traceId).toBe(parent.traceId);
        expect(s.end).toBeGreaterThanOrEqual(s.start);
      }
      expect(spans.filter((s) => s.name.startsWith('chat '))).toHaveLength(
        records.filter((r) => r.type === 'model.requested').length,
      );
      expect(spans.filter((s) => s.name.startsWith('execute_tool '))).toHaveLength(
        new Set(records.flatMap((r) => (r.type === 'tool.finished' ? [`${r.run}/${r.data.toolUseId}`] : [])))
          .size,
      );
      const events = runs.flatMap((r) => r.events.filter((e) => e.name === 'reloop.transition'));
      expect(events.map((e) => e.attributes.seq)).toEqual(
        records.filter((r) => r.type === 'transition').map((r) => r.seq),
      );
      // Translating again gives the same spans: ids come from the log.
      expect(translate(records)).toEqual(spans);
    });
  }

  it('an aborted run and a failed one end in error with the reason as error.type; a refusal is the response', () => {
    const spans = translate(golden('v1-abort-refusal-maxturns'));
    const runs = spans.filter((s) => s.name === 'invoke_agent reloop');
    expect(
      runs.map((r) => [r.attributes['reloop.run.status'], r.attributes['error.type'], r.status.code]),
    ).toEqual([
      ['aborted', 'aborted', 'error'],
      ['failed', 'refused', 'error'],
      ['failed', 'max_turns_reached', 'error'],
    ]);
    expect(spans.some((s) => s.attributes['gen_ai.response.finish_reasons']?.toString() === 'refusal')).toBe(
      true,
    );
  });
});

/** An SDK provider with the log's ids, keeping what it ends in memory. */
function memoryProvider(ids = true) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    ...(ids ? { idGenerator: logIdGenerator } : {}),
    spanLimits: { eventCountLimit: 10_000 },
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  return { provider, spans: () => exporter.getFinishedSpans() };
}

const plain = (s: ReadableSpan) => ({
  traceId: s.spanContext().traceId,
  spanId: s.spanContext().spanId,
  parent: s.parentSpanContext?.spanId ?? null,
  name: s.name,
  kind: s.kind,
  start: s.startTime,
  end: s.endTime,
  attributes: s.attributes,
  events: s.events.map((e) => ({ name: e.name, time: e.time, attributes: e.attributes })),
  status: s.status,
});
const byId = (spans: readonly ReadableSpan[]) =>
  new Map(spans.map((s) => [s.spanContext().spanId, plain(s)]));

/** A parent whose sub-agent's call waits for an approval: the tree parks, then resumes. */
const parkScript = {
  turns: [taskTurn([{ id: 'task_a', prompt: 'deploy' }]), { text: 'all done' }],
  children: {
    task_a: {
      turns: [
        {
          content: [{ type: 'tool_use', id: 'g1', name: 'guarded', input: { text: 'x' } }],
          stop_reason: 'tool_use',
        },
        { text: 'deployed' },
      ],
    },
  },
};

async function parkedAndResumed(provider: BasicTracerProvider) {
  const { tool } = counted();
  const shared = {
    clock: new VirtualClock(),
    ids: counterIds(),
    tools: [tool, echoTool],
    canUseTool: askForGuarded,
  };
  const h = await parentSession(parkScript, { ...shared, tracerProvider: provider });
  const parked = await h.session.submit('go');
  const [child] = await h.children();
  await decideApproval(h.store, child!, 'g1', { allow: true, by: 'alice' });
  const resumed = await Session.open(h.session.id, {
    ...shared,
    store: h.store,
    model: h.client,
    random: seededRandom(42),
    cwd: process.cwd(),
    subAgents: { agents: new AgentCatalog() },
    tracerProvider: provider,
  });
  const done = await resumed.submit();
  return { h, child: child!, parked, done };
}

describe('live, through a TracerProvider (SessionOptions.tracerProvider)', () => {
  it('a parked sub-agent tree, resumed: the same spans as the export of its log, span for span', async () => {
    const live = memoryProvider();
    const { h, child, parked, done } = await parkedAndResumed(live.provider);
    expect([parked.status, done.status]).toEqual(['paused', 'completed']);
    const offline = memoryProvider();
    const result = await exportSessions(h.store, 'all', new TracerSink(offline.provider));
    expect(result.sessions).toEqual([h.session.id, child]);
    expect(byId(offline.spans())).toEqual(byId(live.spans()));
    // The child's second run hangs under the Task call of the parent's second run.
    const spans = live.spans();
    const childRuns = spans.filter((s) => s.name === 'invoke_agent general-purpose');
    const parentRuns = spans.filter((s) => s.name === 'invoke_agent reloop');
    expect(childRuns).toHaveLength(2);
    childRuns.forEach((c, i) => {
      const run = parentRuns[i]!;
      const runId = String(run.attributes['reloop.run.id']);
      expect(c.parentSpanContext?.spanId).toBe(toolSpanIdOf(h.session.id, runId, 'task_a'));
      expect(c.spanContext().traceId).toBe(run.spanContext().traceId);
    });
  });

  it('a provider without the log ids still gets the right tree (parents are the live spans)', async () => {
    const mine = memoryProvider(false);
    await parkedAndResumed(mine.provider);
    const spans = mine.spans();
    const ids = new Map(spans.map((s) => [s.spanContext().spanId, s]));
    const parentOf = (s: ReadableSpan) => ids.get(s.parentSpanContext?.spanId ?? '')?.name ?? null;
    const first = spans.filter((s) => s.name === 'invoke_agent general-purpose')[0]!;
    expect(parentOf(first)).toBe('execute_tool Task');
    expect(
      spans.filter((s) => s.name.startsWith('chat')).every((s) => parentOf(s)?.startsWith('invoke_agent')),
    ).toBe(true);
  });
});

/** Records as the runtime writes them, enough of each for the translator. */
function rec(
  session: string,
  seq: number,
  run: string | null,
  type: string,
  data: object,
  at = 1000 + seq,
): LogRecord {
  return { v: 2, seq, at, session, run, type, data } as LogRecord;
}
const config = { model: 'm', defaultMaxTokens: 100 };

describe('a sub-agent resumed after a crash', () => {
  // The parent's process died while its Task call ran; the next one closed the run and resumed
  // the child (its interrupted run closed, then a new one), then logged the call's result.
  const P = 'p';
  const C = 'c';
  const parent1 = [
    rec(P, 1, null, 'session.created', {}),
    rec(P, 2, 'r1', 'run.started', { config }),
    rec(P, 3, 'r1', 'tool.started', { toolUseId: 'T', name: 'Task', index: 0, readOnly: true }),
    rec(P, 4, 'r1', 'child.started', { toolUseId: 'T', child: C, agent: 'helper' }),
  ];
  const child1 = [
    rec(C, 1, null, 'session.created', {
      parent: { session: P, run: 'r1', toolUseId: 'T', agent: 'helper' },
    }),
    rec(C, 2, 'c1', 'run.started', { config }),
  ];
  const parent2 = [
    rec(P, 5, 'r1', 'run.ended', { status: 'aborted', reason: 'interrupted', turns: 1, usage: zero() }),
    rec(P, 6, 'r2', 'run.started', { config, resumedFrom: 'r1' }),
  ];
  const child2 = [
    rec(C, 3, 'c1', 'run.ended', { status: 'aborted', reason: 'interrupted', turns: 0, usage: zero() }),
    rec(C, 4, 'c2', 'run.started', { config, resumedFrom: 'c1' }),
    rec(C, 5, 'c2', 'run.ended', { status: 'completed', reason: 'completed', turns: 1, usage: zero() }),
  ];
  const parent3 = [
    rec(P, 7, 'r2', 'tool.finished', {
      toolUseId: 'T',
      name: 'Task',
      index: 0,
      outcome: 'ok',
      result: { content: 'done', isError: false },
      durationMs: 0,
    }),
    rec(P, 8, 'r2', 'run.ended', { status: 'completed', reason: 'completed', turns: 1, usage: zero() }),
  ];

  const childRuns = (spans: SpanData[]) => spans.filter((s) => s.name === 'invoke_agent helper');

  it('live (records as they came) and after the fact (parent first) put its new run under the call of the new run', () => {
    const liveTree = new TraceTree(new CollectingSink());
    const p = liveTree.attach(P);
    const c = liveTree.attach(C);
    for (const r of parent1) p.push(r);
    for (const r of child1) c.push(r);
    for (const r of parent2) p.push(r);
    for (const r of child2) c.push(r);
    for (const r of parent3) p.push(r);
    const live = (liveTree.sink as CollectingSink).spans;

    const offline = new TraceTree(new CollectingSink());
    translate([...parent1, ...parent2, ...parent3], offline);
    translate([...child1, ...child2], offline);
    const after = (offline.sink as CollectingSink).spans;

    const key = (s: SpanData) => s.spanId;
    expect(new Map(after.map((s) => [key(s), s]))).toEqual(new Map(live.map((s) => [key(s), s])));
    const [old, resumed] = childRuns(live);
    expect(old!.parentSpanId).toBe(toolSpanIdOf(P, 'r1', 'T'));
    expect(old!.attributes['error.type']).toBe('interrupted');
    expect(resumed!.parentSpanId).toBe(toolSpanIdOf(P, 'r2', 'T'));
    const runTrace = (run: string) =>
      live.find((s) => s.name === 'invoke_agent reloop' && s.attributes['reloop.run.id'] === run)!.traceId;
    expect([old!.traceId, resumed!.traceId]).toEqual([runTrace('r1'), runTrace('r2')]);
    // The call cut short in the dead run: ended with that run, interrupted.
    const calls = live.filter((s) => s.name === 'execute_tool Task');
    expect(
      calls.map((s) => [s.attributes['reloop.run.id'] ?? s.parentSpanId, s.attributes['error.type'] ?? null]),
    ).toEqual([
      [live.find((s) => s.attributes['reloop.run.id'] === 'r1')!.spanId, 'interrupted'],
      [live.find((s) => s.attributes['reloop.run.id'] === 'r2')!.spanId, null],
    ]);
  });
});

function zero() {
  return {
    inputTokens: 0,
    outputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    costUsd: 0,
  };
}

describe('tolerance and content', () => {
  const S = 's';
  const base = [
    rec(S, 1, null, 'session.created', {}),
    rec(S, 2, 'r', 'run.started', { config: { ...config, system: 'Be brief.' } }),
    rec(S, 3, 'r', 'user.message', { message: { role: 'user', content: 'use sk-live-0123456789abcdef' } }),
    rec(S, 4, 'r', 'model.requested', {
      purpose: 'turn',
      model: 'm',
      maxTokens: 100,
      messageCount: 1,
      attempt: 1,
    }),
    rec(S, 5, 'r', 'model.responded', {
      purpose: 'turn',
      response: {
        id: 'msg_1',
        model: 'm-1',
        content: [{ type: 'tool_use', id: 'T', name: 'mcp__files__read', input: { path: 'a' } }],
        stopReason: 'tool_use',
        usage: { ...zero(), inputTokens: 5, cacheCreationInputTokens: 2 },
      },
    }),
    // A hook event and a field this version does not know, and a record type it has never seen.
    rec(S, 6, 'r', 'hook.decided', {
      hook: 'PermissionRequest',
      decision: 'allow',
      toolUseId: 'T',
      durationMs: 1,
      matcher: 'mcp__.*',
      output: 'shown to the model',
    }),
    rec(S, 7, 'r', 'mcp.connected', { server: 'files' }),
    rec(S, 8, 'r', 'tool.started', { toolUseId: 'T', name: 'mcp__files__read', index: 0, readOnly: true }),
    rec(S, 9, 'r', 'tool.finished', {
      toolUseId: 'T',
      name: 'mcp__files__read',
      index: 0,
      outcome: 'ok',
      result: { content: 'the key is sk-live-0123456789abcdef', isError: false },
      durationMs: 3,
    }),
    rec(S, 10, 'r', 'run.ended', { status: 'completed', reason: 'completed', turns: 1, usage: zero() }),
  ];

  it('ignores what it does not know, keeps new fields of known records, names tools from the records', () => {
    const spans = translate(base);
    expect(spans.map((s) => s.name)).toEqual([
      'chat m',
      'execute_tool mcp__files__read',
      'invoke_agent reloop',
    ]);
    const tool = spans[1]!;
    expect(tool.attributes['gen_ai.tool.type']).toBe('extension');
    expect(tool.events).toEqual([
      {
        name: 'reloop.hook',
        time: 1006,
        // Content fields (the hook's output) stay off without opt-in.
        attributes: {
          hook: 'PermissionRequest',
          decision: 'allow',
          duration_ms: 1,
          matcher: 'mcp__.*',
          seq: 6,
        },
      },
    ]);
    expect(spans[0]!.attributes).toMatchObject({
      'gen_ai.response.model': 'm-1',
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.cache_creation.input_tokens': 2,
    });
    for (const s of spans) expect(JSON.stringify(s)).not.toContain('sk-live');
  });

  it('with content: input and output messages, system instructions, tool arguments and result, all redacted', () => {
    const redactor = new Redactor(new Map([['SERVICE_API_KEY', 'sk-live-0123456789abcdef']]));
    const spans = translate(base, new TraceTree(new CollectingSink(), { content: { redactor } }));
    const [chat, tool, run] = spans;
    expect(JSON.parse(String(chat!.attributes['gen_ai.input.messages']))).toEqual([
      {
        role: 'user',
        parts: [{ type: 'text', content: `use ${'*'.repeat('sk-live-0123456789abcdef'.length)}` }],
      },
    ]);
    expect(JSON.parse(String(chat!.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'T', name: 'mcp__files__read', arguments: { path: 'a' } }],
        finish_reason: 'tool_call',
      },
    ]);
    expect(run!.attributes['gen_ai.system_instructions']).toBe('[{"type":"text","content":"Be brief."}]');
    expect(tool!.attributes['gen_ai.tool.call.arguments']).toBe('{"path":"a"}');
    expect(tool!.attributes['gen_ai.tool.call.result']).not.toContain('sk-live');
    expect(tool!.events[0]!.attributes.output).toBe('shown to the model');
  });
});
