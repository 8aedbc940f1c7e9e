/**
 * Sub-agents on the real Anthropic SDK: the parent and its children all talk to one loopback
 * Messages server, concurrently. The server answers each request from the conversation it
 * belongs to (keyed by its first user message: the parent's prompt, or a child's Task prompt)
 * and how far along it is (the assistant turns it already holds), so parallel children get
 * their own answers whatever order their requests arrive in.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AgentCatalog, GENERAL_PURPOSE_AGENT, loadAgents } from '../../src/agents/index.ts';
import { AnthropicModelClient } from '../../src/model/anthropic.ts';
import { verifyTree } from '../../src/replay/verifyTree.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { meetingTool, recordsOf, untilAbortedTool } from '../runtime/children/support.ts';
import { echoTool } from '../support/harness.ts';
import { readLog } from '../support/logRecords.ts';
import {
  httpError,
  type MessagesServer,
  type RecordedRequest,
  type ScriptedReply,
  startMessagesServer,
  textReply,
} from '../support/messagesServer.ts';

const KEY = 'sk-ant-test-LOOPBACK-KEY-0123456789';
const MODEL = 'claude-sonnet-4-6';

type Conversation = (turn: number, req: RecordedRequest) => ScriptedReply;
const conversations = new Map<string, Conversation>();
const dirs: string[] = [];

function firstText(req: RecordedRequest): string {
  const c = req.body.messages?.[0]?.content;
  if (typeof c === 'string') return c;
  return Array.isArray(c) ? c.map((b: { text?: string }) => b.text ?? '').join('') : '';
}

function route(req: RecordedRequest): ScriptedReply {
  const conversation = conversations.get(firstText(req));
  if (!conversation)
    return httpError(418, 'invalid_request_error', `no conversation for ${JSON.stringify(firstText(req))}`);
  return conversation(req.body.messages?.filter((m) => m.role === 'assistant').length ?? 0, req);
}

let server: MessagesServer;
beforeAll(async () => {
  server = await startMessagesServer({ apiKey: KEY, fallback: route });
});
afterAll(async () => {
  await server.close();
});
afterEach(async () => {
  conversations.clear();
  server.requests.length = 0;
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

/** The replies of one conversation, turn by turn. */
function says(...turns: ScriptedReply[]): Conversation {
  return (turn) => turns[turn] ?? httpError(418, 'invalid_request_error', `turn ${turn + 1} is not scripted`);
}

function task(id: string, prompt: string, agent = 'general-purpose'): ScriptedReply {
  return {
    kind: 'message',
    content: [
      {
        type: 'tool_use',
        id,
        name: 'Task',
        input: { description: `task ${id}`, prompt, subagent_type: agent },
      },
    ],
  };
}
function tasks(...calls: [string, string][]): ScriptedReply {
  return {
    kind: 'message',
    content: calls.map(([id, prompt]) => ({
      type: 'tool_use',
      id,
      name: 'Task',
      input: { description: `task ${id}`, prompt, subagent_type: 'general-purpose' },
    })),
  };
}
function use(id: string, name: string, input: unknown): ScriptedReply {
  return {
    kind: 'message',
    content: [{ type: 'tool_use', id, name, input }],
    usage: { input_tokens: 30, output_tokens: 5 },
  };
}

async function sdkParent(extra: Partial<SessionOptions> = {}) {
  const store = new MemoryEventStore();
  const session = await Session.create({
    store,
    model: new AnthropicModelClient({ apiKey: KEY, baseURL: server.url }),
    clock: new VirtualClock(),
    random: seededRandom(7),
    ids: counterIds(),
    cwd: process.cwd(),
    tools: [echoTool],
    settings: { model: MODEL },
    subAgents: { agents: new AgentCatalog() },
    ...extra,
  });
  return {
    session,
    store,
    children: async () =>
      recordsOf(await readLog(store, session.id), 'child.started').map((r) => r.data.child),
  };
}

const requestsOf = (prompt: string) => server.requests.filter((r) => firstText(r) === prompt);

describe('sub-agents on the real SDK (loopback Messages API)', () => {
  it('one child: Task offered to the parent only, the child answers, both logs verify as a tree', async () => {
    conversations.set(
      'what does the test expect?',
      says(task('toolu_t1', 'Read the test and report.'), textReply('It expects 5.')),
    );
    conversations.set(
      'Read the test and report.',
      says(use('tu_e', 'echo', { text: 'test.js' }), textReply('sum(2, 3) must be 5.')),
    );
    const p = await sdkParent();
    const res = await p.session.submit('what does the test expect?');
    expect(res).toMatchObject({ status: 'completed', turns: 2 });

    const parentBody = requestsOf('what does the test expect?')[0]!.body;
    expect(parentBody.tools?.map((t) => t.name)).toEqual(['echo', 'Task']);
    const childBody = requestsOf('Read the test and report.')[0]!.body;
    expect(childBody.tools?.map((t) => t.name)).toEqual(['echo']);
    expect(childBody.system).toBe(GENERAL_PURPOSE_AGENT.systemPrompt);
    // The child's answer went back as the Task tool_result.
    const second = requestsOf('what does the test expect?')[1]!.body.messages!.at(-1)!;
    expect(second.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_t1', content: 'sum(2, 3) must be 5.' },
    ]);
    const [child] = await p.children();
    expect(recordsOf(await readLog(p.store, child!), 'session.created')[0]!.data.parent).toMatchObject({
      session: p.session.id,
      toolUseId: 'toolu_t1',
    });
    expect((await verifyTree(p.store, p.session.id)).divergence).toBeNull();
  });

  it('two children in parallel: their tool calls overlap (both entered before either left)', async () => {
    const meet = meetingTool(2);
    conversations.set(
      'split the work',
      says(tasks(['toolu_a', 'meet as a'], ['toolu_b', 'meet as b']), textReply('both done')),
    );
    conversations.set('meet as a', says(use('tu_a', 'meet', { who: 'a' }), textReply('a done')));
    conversations.set('meet as b', says(use('tu_b', 'meet', { who: 'b' }), textReply('b done')));
    const p = await sdkParent({ tools: [echoTool, meet.tool] });
    expect((await p.session.submit('split the work')).status).toBe('completed');
    expect(meet.events.slice(0, 2).sort()).toEqual(['enter a', 'enter b']);
    const last = requestsOf('split the work')[1]!.body.messages!.at(-1)!;
    expect(
      (last.content as { tool_use_id: string; content: string }[]).map((b) => [b.tool_use_id, b.content]),
    ).toEqual([
      ['toolu_a', 'a done'],
      ['toolu_b', 'b done'],
    ]);
    expect((await verifyTree(p.store, p.session.id)).ok).toBe(true);
  });

  it('a .claude/agents agent: its tools are what its requests offer, its body is its system prompt', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'reloop-sdk-agents-'));
    dirs.push(cwd);
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    await writeFile(
      path.join(cwd, '.claude', 'agents', 'echoer.md'),
      '---\nname: echoer\ndescription: Echoes.\ntools: echo\nmodel: claude-haiku-4-5\n---\nYou only ever echo.\n',
    );
    const meet = meetingTool(1);
    conversations.set('delegate', says(task('toolu_e', 'echo hi', 'echoer'), textReply('ok')));
    conversations.set('echo hi', says(textReply('hi')));
    const p = await sdkParent({
      cwd,
      tools: [echoTool, meet.tool],
      subAgents: { agents: await loadAgents({ cwd }) },
    });
    expect((await p.session.submit('delegate')).status).toBe('completed');
    const childBody = requestsOf('echo hi')[0]!.body;
    expect(childBody.tools?.map((t) => t.name)).toEqual(['echo']);
    expect(childBody.system).toBe('You only ever echo.');
    expect(childBody.model).toBe('claude-haiku-4-5');
    expect(requestsOf('delegate')[0]!.body.tools?.map((t) => t.name)).toEqual(['echo', 'meet', 'Task']);
  });

  it('a failing child: the API refuses its request, the parent gets is_error and goes on', async () => {
    conversations.set('try it', says(task('toolu_f', 'fail please'), textReply('I will do it myself.')));
    conversations.set('fail please', says(httpError(400, 'invalid_request_error', 'messages: bad')));
    const p = await sdkParent();
    const res = await p.session.submit('try it');
    expect(res).toMatchObject({ status: 'completed', turns: 2 });
    const result = requestsOf('try it')[1]!.body.messages!.at(-1)!.content as {
      is_error?: boolean;
      content: string;
    }[];
    expect(result[0]!.is_error).toBe(true);
    expect(result[0]!.content).toMatch(/^\[sub-agent general-purpose failed: model_error\]/);
    expect((await verifyTree(p.store, p.session.id)).ok).toBe(true);
  });

  it('abort during a child: the child and the parent both log it, and the tree verifies', async () => {
    const wait = untilAbortedTool();
    conversations.set('start it', says(task('toolu_w', 'wait for ever')));
    conversations.set('wait for ever', says(use('tu_w', 'wait', { what: 'ever' })));
    const p = await sdkParent({ tools: [echoTool, wait.tool] });
    const run = p.session.submit('start it');
    await wait.running;
    p.session.abort();
    expect(await run).toMatchObject({ status: 'aborted', reason: 'aborted' });
    const [child] = await p.children();
    const childLog = await readLog(p.store, child!);
    expect(recordsOf(childLog, 'abort.requested')).toHaveLength(1);
    expect(recordsOf(childLog, 'run.ended')[0]!.data.status).toBe('aborted');
    expect(recordsOf(await readLog(p.store, p.session.id), 'child.finished')[0]!.data.status).toBe('aborted');
    expect((await verifyTree(p.store, p.session.id)).divergence).toBeNull();
  });
});
