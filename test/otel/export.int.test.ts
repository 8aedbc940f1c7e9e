/**
 * OpenTelemetry traces through the real CLI and the real OTLP exporter, received by a loopback
 * collector that decodes them with the OTLP protobuf definitions (test/support/otlpReceiver.ts):
 * `run --otel` live, `export otel` after the fact (the same spans, span for span), an imported
 * Claude Code transcript, a log from before tracing existed, and a dead collector.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transcript, text, toolUse } from '../support/claudeCodeTranscript.ts';
import { onlyJson, runCli } from '../support/cli.ts';
import { readStoredLog } from '../support/logRecords.ts';
import { type ReceivedSpan, spansOfJson, startOtlpReceiver } from '../support/otlpReceiver.ts';
import { runScenario, type Scenario, scenarioProject, treeOf } from './scenario.ts';

const SLOW = 180_000;
let root: string;
let live: Scenario;
let liveSpans: ReceivedSpan[];

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-otel-'));
  const rx = await startOtlpReceiver();
  try {
    live = await runScenario(await scenarioProject(root, 'live'), ['--otel'], {
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
    });
    liveSpans = rx.spans;
  } finally {
    await rx.close();
  }
}, SLOW);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const records = readStoredLog;

/** A span by name and session, the `nth` of them in start order. */
function span(spans: readonly ReceivedSpan[], name: string, session: string, nth = 0): ReceivedSpan {
  const found = spans
    .filter((s) => s.name === name && s.attributes['reloop.session.id'] === session)
    .sort((a, b) => Number(a.attributes['reloop.seq']) - Number(b.attributes['reloop.seq']));
  const s = found[nth];
  if (!s) throw new Error(`no span ${name} #${nth} of ${session}: ${treeOf(spans).join('\n')}`);
  return s;
}

/** Everything of a span but the resource (which process sent it). */
const comparable = (s: ReceivedSpan) => JSON.stringify({ ...s, resource: undefined });
const bySpanId = (spans: readonly ReceivedSpan[]) => new Map(spans.map((s) => [s.spanId, comparable(s)]));

describe('run --otel: the scripted session, live', () => {
  it('exports the span tree: runs, model requests (the retry, the compaction), tool calls, the sub-agent under its Task call', () => {
    expect(treeOf(liveSpans)).toEqual([
      'invoke_agent reloop',
      '  chat claude-sonnet-4-6 ! rate_limit_error',
      '  chat claude-sonnet-4-6',
      '  execute_tool Read',
      '  chat claude-sonnet-4-6',
      '  chat claude-sonnet-4-6',
      '  execute_tool Task',
      '    invoke_agent deployer',
      '      chat claude-sonnet-4-6',
      '      execute_tool Bash',
      'invoke_agent reloop',
      '  execute_tool Task',
      '    invoke_agent deployer',
      '      execute_tool Bash',
      '      chat claude-sonnet-4-6',
      '  chat claude-sonnet-4-6',
    ]);
    // Each run is a trace; the sub-agent's runs are in its parent's, under the Task call of that run.
    const [run1, run2] = [0, 1].map((n) => span(liveSpans, 'invoke_agent reloop', live.parent, n));
    expect(run1!.traceId).not.toBe(run2!.traceId);
    for (const [n, run] of [run1!, run2!].entries()) {
      const task = span(liveSpans, 'execute_tool Task', live.parent, n);
      const child = span(liveSpans, 'invoke_agent deployer', live.child, n);
      expect(task.parentSpanId).toBe(run.spanId);
      expect(child.parentSpanId).toBe(task.spanId);
      expect(new Set([task.traceId, child.traceId])).toEqual(new Set([run.traceId]));
      expect(child.attributes['reloop.parent.session.id']).toBe(live.parent);
    }
  });

  it('carries the GenAI attributes: operation, provider, models, tokens (cache included), response, finish reasons, errors', () => {
    const run1 = span(liveSpans, 'invoke_agent reloop', live.parent);
    expect(run1.kind).toBe(1);
    expect(run1.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.agent.name': 'reloop',
      'gen_ai.conversation.id': live.parent,
      'gen_ai.request.model': 'claude-sonnet-4-6',
      'reloop.session.id': live.parent,
      'reloop.run.status': 'paused',
      'reloop.run.reason': 'awaiting_approval',
    });
    expect(run1.status.code).toBe(0);
    const [retry, read, compaction, task] = [0, 1, 2, 3].map((n) =>
      span(liveSpans, 'chat claude-sonnet-4-6', live.parent, n),
    );
    expect(retry!.kind).toBe(3);
    expect(retry!.status).toEqual({ code: 2, message: 'slow down' });
    expect(retry!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'error.type': 'rate_limit_error',
      'http.response.status_code': 429,
      'reloop.model.attempt': 1,
    });
    expect(read!.attributes).toMatchObject({
      'gen_ai.request.model': 'claude-sonnet-4-6',
      'gen_ai.request.max_tokens': 8192,
      'gen_ai.response.model': 'claude-sonnet-4-6',
      'gen_ai.response.finish_reasons': ['tool_use'],
      // Anthropic's input_tokens leaves cached tokens out; the conventions' count has them.
      'gen_ai.usage.input_tokens': 171_000,
      'gen_ai.usage.output_tokens': 12,
      'gen_ai.usage.cache_read.input_tokens': 1_000,
      'gen_ai.usage.cache_creation.input_tokens': 0,
      'reloop.model.attempt': 2,
      'reloop.model.purpose': 'turn',
    });
    expect(typeof read!.attributes['gen_ai.response.id']).toBe('string');
    expect(compaction!.attributes['reloop.model.purpose']).toBe('compaction');
    expect(task!.attributes['gen_ai.response.finish_reasons']).toEqual(['tool_use']);
    const readTool = span(liveSpans, 'execute_tool Read', live.parent);
    expect(readTool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'Read',
      'gen_ai.tool.call.id': 'toolu_read',
      'gen_ai.tool.type': 'function',
      'reloop.tool.outcome': 'ok',
      'reloop.tool.read_only': true,
    });
    const child = span(liveSpans, 'invoke_agent deployer', live.child);
    expect(child.attributes).toMatchObject({
      'gen_ai.agent.name': 'deployer',
      'gen_ai.conversation.id': live.child,
    });
    // No content unless asked for.
    for (const s of liveSpans) {
      for (const k of Object.keys(s.attributes))
        expect(k).not.toMatch(/messages|arguments|result|instructions/);
    }
    expect(run1.resource['service.name']).toBe('reloop');
  });

  it("carries reloop's own truth: every transition an event with from/to/reason/seq, backoff, compaction, approvals, permissions", async () => {
    const log = await records(live.store, live.parent);
    const transitions = log.filter((r) => r.type === 'transition');
    const events = [0, 1].flatMap((n) =>
      span(liveSpans, 'invoke_agent reloop', live.parent, n).events.filter(
        (e) => e.name === 'reloop.transition',
      ),
    );
    expect(events.map((e) => e.attributes)).toEqual(
      transitions.map((t) => ({ from: t.data.from, to: t.data.to, reason: t.data.reason, seq: t.seq })),
    );
    const run1 = span(liveSpans, 'invoke_agent reloop', live.parent);
    const names = run1.events.map((e) => e.name);
    expect(names).toContain('reloop.backoff');
    expect(run1.events.find((e) => e.name === 'reloop.compaction')?.attributes).toMatchObject({
      ok: true,
      mode: 'auto',
    });
    // Every span names the record it starts at: a span leads back to `reloop log`.
    const bySeq = new Map(log.map((r) => [r.seq, r.type]));
    for (const s of liveSpans.filter((x) => x.attributes['reloop.session.id'] === live.parent)) {
      const first = bySeq.get(Number(s.attributes['reloop.seq']));
      expect(first, s.name).toBe(
        s.name.startsWith('invoke_agent')
          ? 'run.started'
          : s.name.startsWith('chat')
            ? 'model.requested'
            : 'permission.decided',
      );
    }
    // The child's Bash call: parked in the first run, approved between runs, run in the second.
    const parked = span(liveSpans, 'execute_tool Bash', live.child, 0);
    expect(parked.attributes['reloop.tool.outcome']).toBe('parked');
    expect(parked.status.code).toBe(0);
    expect(parked.events.map((e) => e.name)).toEqual(['reloop.approval.requested']);
    const ran = span(liveSpans, 'execute_tool Bash', live.child, 1);
    expect(ran.events.find((e) => e.name === 'reloop.approval.decided')?.attributes).toMatchObject({
      decision: 'allow',
      by: 'alice',
    });
    expect(ran.attributes['reloop.tool.outcome']).toBe('ok');
    const task = span(liveSpans, 'execute_tool Task', live.parent, 0);
    expect(task.events.map((e) => e.name)).toEqual([
      'reloop.permission',
      'reloop.child.started',
      'reloop.approval.requested',
    ]);
    expect(task.attributes['reloop.tool.outcome']).toBe('parked');
  });
});

describe('export otel: the same spans from the log', () => {
  it('exports the stored sessions as the live run did, span for span; exporting twice gives the same ids', async () => {
    const again: ReceivedSpan[][] = [];
    for (let i = 0; i < 2; i++) {
      const rx = await startOtlpReceiver();
      try {
        const r = await runCli(
          ['export', 'otel', '--all', '--endpoint', rx.url, '--store', live.store, '--json'],
          {
            cwd: live.cwd,
          },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(onlyJson(r)).toMatchObject({ sessions: [live.parent, live.child], spans: liveSpans.length });
        again.push(rx.spans);
      } finally {
        await rx.close();
      }
    }
    expect(bySpanId(again[0]!)).toEqual(bySpanId(liveSpans));
    expect(bySpanId(again[1]!)).toEqual(bySpanId(liveSpans));
  });

  it('a sub-agent exported alone still hangs under its parent call (the parent is read, not exported)', async () => {
    const rx = await startOtlpReceiver();
    try {
      const r = await runCli(
        ['export', 'otel', live.child, '--endpoint', `${rx.url}/v1/traces`, '--store', live.store],
        {
          cwd: live.cwd,
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('exported 1 session');
      expect(new Set(rx.spans.map((s) => s.attributes['reloop.session.id']))).toEqual(new Set([live.child]));
      const want = bySpanId(liveSpans.filter((s) => s.attributes['reloop.session.id'] === live.child));
      expect(bySpanId(rx.spans)).toEqual(want);
    } finally {
      await rx.close();
    }
  });

  it('--out writes OTLP/JSON lines with the same spans; OTEL_EXPORTER_OTLP_PROTOCOL=http/json sends JSON', async () => {
    const file = path.join(root, 'spans.json');
    const r = await runCli(['export', 'otel', '--all', '--out', file, '--store', live.store], {
      cwd: live.cwd,
    });
    expect(r.code, r.stderr).toBe(0);
    const lines = (await readFile(file, 'utf8')).split('\n').filter(Boolean);
    expect(bySpanId(lines.flatMap((l) => spansOfJson(JSON.parse(l))))).toEqual(bySpanId(liveSpans));

    // With --content: the conversation too (what the Read call returned, the messages sent).
    const withContent = path.join(root, 'content.json');
    const c = await runCli(
      ['export', 'otel', '--all', '--content', '--out', withContent, '--store', live.store],
      {
        cwd: live.cwd,
      },
    );
    expect(c.code, c.stderr).toBe(0);
    const contentSpans = (await readFile(withContent, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => spansOfJson(JSON.parse(l)));
    expect(
      span(contentSpans, 'execute_tool Read', live.parent).attributes['gen_ai.tool.call.result'],
    ).toContain('ship it on friday');
    const firstChat = span(contentSpans, 'chat claude-sonnet-4-6', live.parent);
    expect(JSON.parse(String(firstChat.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'deploy' }] },
    ]);

    const rx = await startOtlpReceiver();
    try {
      const j = await runCli(['export', 'otel', '--all', '--store', live.store], {
        cwd: live.cwd,
        env: {
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${rx.url}/v1/traces`,
          OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        },
      });
      expect(j.code, j.stderr).toBe(0);
      expect(rx.requests[0]?.contentType).toContain('application/json');
      expect(bySpanId(rx.spans)).toEqual(bySpanId(liveSpans));
    } finally {
      await rx.close();
    }
  });

  it('exports a log written before tracing existed (a golden v1 log)', async () => {
    const store = path.join(root, 'golden');
    await mkdir(path.join(store, 'sessions'), { recursive: true });
    await copyFile(
      new URL('../fixtures/logs/v1-tools-retry-recovery.jsonl', import.meta.url),
      path.join(store, 'sessions', 'golden-s1.jsonl'),
    );
    const file = path.join(root, 'golden.json');
    const r = await runCli(['export', 'otel', 'golden-s1', '--out', file, '--store', store], { cwd: root });
    expect(r.code, r.stderr).toBe(0);
    const spans = (await readFile(file, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => spansOfJson(JSON.parse(l)));
    expect(treeOf(spans)).toEqual([
      'invoke_agent reloop',
      '  chat claude-sonnet-4-6',
      '  execute_tool echo',
      '  chat claude-sonnet-4-6 ! overloaded_error',
      '  chat claude-sonnet-4-6 ! rate_limit_error',
      '  chat claude-sonnet-4-6',
      '  chat claude-sonnet-4-6',
      '  chat claude-sonnet-4-6',
      'invoke_agent reloop',
      '  chat claude-sonnet-4-6',
    ]);
    // The original times: the log's first record is 2026-01-01T00:00:00Z.
    expect(spans.find((s) => s.name === 'invoke_agent reloop')?.startTimeUnixNano).toBe(
      '1767225600000000000',
    );
  });

  it('exports an imported Claude Code transcript, its sub-agent under its Task call', async () => {
    const project = path.join(root, 'cc', '-work-demo');
    const sid = '22222222-0000-4000-8000-000000000001';
    const main = new Transcript({ sessionId: sid });
    main.prompt('look around');
    main.assistant([text('Reading.'), toolUse('toolu_read', 'Read', { file_path: 'a.ts' })], {
      stopReason: 'tool_use',
    });
    main.toolResult('toolu_read', 'export const a = 1;');
    main.assistant(
      [
        toolUse('toolu_task', 'Task', {
          description: 'explore',
          prompt: 'Find the tests.',
          subagent_type: 'Explore',
        }),
      ],
      { stopReason: 'tool_use' },
    );
    main.toolResult('toolu_task', 'The tests are in test/.');
    main.assistant([text('Done.')], { stopReason: 'end_turn' });
    const sub = new Transcript({ sessionId: sid, agentId: 'a9f0e1', salt: 1 });
    sub.prompt('Find the tests.');
    sub.assistant([text('In test/.')], { stopReason: 'end_turn' });
    const subDir = path.join(project, sid, 'subagents');
    await mkdir(subDir, { recursive: true });
    await writeFile(path.join(project, `${sid}.jsonl`), main.jsonl());
    await writeFile(path.join(subDir, 'agent-a9f0e1.jsonl'), sub.jsonl());
    await writeFile(
      path.join(subDir, 'agent-a9f0e1.meta.json'),
      JSON.stringify({ agentType: 'Explore', description: 'explore', toolUseId: 'toolu_task' }),
    );
    const store = path.join(root, 'imported');
    const imported = await runCli(['import', path.join(project, `${sid}.jsonl`), '--store', store], {
      cwd: root,
    });
    expect(imported.code, imported.stderr).toBe(0);
    const rx = await startOtlpReceiver();
    try {
      const r = await runCli(['export', 'otel', '--all', '--endpoint', rx.url, '--store', store], {
        cwd: root,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(treeOf(rx.spans)).toEqual([
        'invoke_agent claude-code',
        '  chat claude-sonnet-4-5-20250929',
        '  execute_tool Read',
        '  chat claude-sonnet-4-5-20250929',
        '  execute_tool Task',
        '    invoke_agent Explore',
        '      chat claude-sonnet-4-5-20250929',
        '  chat claude-sonnet-4-5-20250929',
      ]);
      const agent = rx.spans.find((s) => s.name === 'invoke_agent claude-code')!;
      expect(agent.attributes['reloop.imported_from']).toBe('claude-code');
      // The transcript's own times: its first line is 2026-01-05T09:00:00Z.
      expect(BigInt(agent.startTimeUnixNano) / 1_000_000n).toBeGreaterThanOrEqual(
        BigInt(Date.UTC(2026, 0, 5, 9)),
      );
    } finally {
      await rx.close();
    }
  });

  it('says what is wrong: no sessions, two destinations, an unknown session, a refusing collector', async () => {
    const cli = (...args: string[]) =>
      runCli(['export', 'otel', ...args, '--store', live.store], { cwd: live.cwd });
    expect((await cli()).stderr).toContain('name the sessions to export, or --all');
    expect((await cli('--all', '--out', 'x.json', '--endpoint', 'http://127.0.0.1:1')).code).toBe(2);
    const unknown = await cli('s_nope', '--out', path.join(root, 'nope.json'));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('[SESSION_NOT_FOUND]');
    const grpc = await runCli(['export', 'otel', '--all', '--store', live.store], {
      cwd: live.cwd,
      env: { OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' },
    });
    expect(grpc.code).toBe(2);
    expect(grpc.stderr).toContain('reloop exports http/protobuf or http/json');
    const refusing = await startOtlpReceiver({ status: 400 });
    try {
      const r = await cli('--all', '--endpoint', refusing.url);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`could not export spans to ${refusing.url}/v1/traces`);
      expect(r.stderr).toContain('[OTEL_EXPORT_FAILED]');
    } finally {
      await refusing.close();
    }
  });
});

/** A port nothing listens on: bound, then closed. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a dead collector', () => {
  it(
    'costs the run nothing: it completes as without --otel, one warning, the dropped spans counted',
    async () => {
      const port = await deadPort();
      const env = {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_EXPORTER_OTLP_TIMEOUT: '1000',
      };
      const traced = await runScenario(await scenarioProject(root, 'dead'), ['--otel'], env);
      const plain = await runScenario(await scenarioProject(root, 'plain'), []);
      const shape = async (s: Scenario) =>
        (await records(s.store, s.parent)).map((r) => (r.type === 'transition' ? r.data.reason : r.type));
      expect(await shape(traced)).toEqual(await shape(plain));
      for (const stderr of traced.stderr) {
        const lines = stderr.split('\n').filter(Boolean);
        expect(lines.filter((l) => l.startsWith('warning: otel:'))).toHaveLength(1);
        expect(lines.join('\n')).toMatch(
          /otel: \d+ of \d+ spans dropped, not exported to http:\/\/127\.0\.0\.1:\d+\/v1\/traces/,
        );
      }
    },
    SLOW,
  );
});
