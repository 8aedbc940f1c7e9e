import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentCatalog, loadAgents } from '../../../src/agents/index.ts';
import { historyProblems } from '../../../src/model/history.ts';
import { verifyReplay } from '../../../src/replay/verify.ts';
import { verifyTree } from '../../../src/replay/verifyTree.ts';
import { echoTool, textTurn, toolTurn } from '../../support/harness.ts';
import { meetingTool, parentSession, reasonsOf, recordsOf, taskTurn, untilAbortedTool } from './support.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe('sub-agents (Task) through the runtime, scripted model', () => {
  it('one child: its last text is the tool_result, both logs link and verify', async () => {
    const h = await parentSession({
      turns: [
        taskTurn([{ id: 'toolu_task_1', prompt: 'Read the test and report.' }]),
        textTurn('The child says: 2+3'),
      ],
      children: {
        toolu_task_1: {
          turns: [
            toolTurn([{ name: 'echo', input: { text: 'test.js' } }]),
            textTurn('The test expects sum(2, 3) = 5.'),
          ],
        },
      },
    });
    const res = await h.session.submit('find out what the test expects');
    expect(res).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });

    const [childId] = await h.children();
    expect(childId).toBeDefined();
    const parent = await h.records();
    const child = await h.records(childId);

    // The parent: tool.started(Task) → child.started → child.finished → tool.finished.
    const order = parent
      .filter((r) => ['tool.started', 'child.started', 'child.finished', 'tool.finished'].includes(r.type))
      .map((r) => r.type);
    expect(order).toEqual(['tool.started', 'child.started', 'child.finished', 'tool.finished']);
    const started = recordsOf(parent, 'child.started')[0]!;
    expect(started.data).toEqual({ toolUseId: 'toolu_task_1', child: childId, agent: 'general-purpose' });
    const finished = recordsOf(parent, 'child.finished')[0]!;
    expect(finished.data).toMatchObject({
      toolUseId: 'toolu_task_1',
      child: childId,
      status: 'completed',
      reason: 'completed',
      turns: 2,
    });
    expect(finished.data.usage.inputTokens).toBe(200);

    // The child: its own stream, linked to the call that started it.
    expect(child[0]).toMatchObject({
      type: 'session.created',
      data: {
        title: 'task toolu_task_1',
        parent: {
          session: h.session.id,
          run: res.runId,
          toolUseId: 'toolu_task_1',
          agent: 'general-purpose',
        },
      },
    });
    expect(reasonsOf(child)).toEqual([
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);

    // The tool_result is the child's last text.
    const results = recordsOf(parent, 'tool.finished')[0]!;
    expect(results.data).toMatchObject({
      name: 'Task',
      outcome: 'ok',
      result: { content: 'The test expects sum(2, 3) = 5.', isError: false },
    });

    // The child's usage is the parent run's too.
    const ended = recordsOf(parent, 'run.ended')[0]!;
    expect(ended.data.usage.inputTokens).toBe(200 + 200);

    // What each side was offered: Task (listing the agents) for the parent, never for the child.
    const parentTools = h.client.requests[0]!.tools.map((t) => t.name);
    expect(parentTools).toEqual(['echo', 'Task']);
    expect(h.client.requests[0]!.tools[1]!.description).toContain('- general-purpose: ');
    expect(historyProblems(h.session.state.messages.view())).toEqual([]);

    // The catalog knows the tree.
    const rows = await h.store.list();
    expect(rows.find((r) => r.id === childId)?.parent).toEqual({
      session: h.session.id,
      toolUseId: 'toolu_task_1',
      agent: 'general-purpose',
    });
    expect(rows.find((r) => r.id === h.session.id)?.parent).toBeNull();

    expect((await verifyReplay(parent)).divergence).toBeNull();
    const tree = await verifyTree(h.store, h.session.id);
    expect(tree.divergence).toBeNull();
    expect(tree.sessions.map((s) => [s.session, s.parent])).toEqual([
      [h.session.id, null],
      [childId, h.session.id],
    ]);
  });

  it('two children run in parallel: their tool calls overlap, results come back in call order', async () => {
    const meet = meetingTool(2);
    const h = await parentSession(
      {
        turns: [
          taskTurn([
            { id: 'toolu_a', prompt: 'meet as a' },
            { id: 'toolu_b', prompt: 'meet as b' },
          ]),
          textTurn('both met'),
        ],
        children: {
          toolu_a: { turns: [toolTurn([{ name: 'meet', input: { who: 'a' } }]), textTurn('a is done')] },
          toolu_b: { turns: [toolTurn([{ name: 'meet', input: { who: 'b' } }]), textTurn('b is done')] },
        },
      },
      { tools: [echoTool, meet.tool] },
    );
    const res = await h.session.submit('meet');
    expect(res.status).toBe('completed');
    // Tool-side evidence: both entered before either left.
    expect(meet.events.slice(0, 2).sort()).toEqual(['enter a', 'enter b']);
    expect(meet.events).toHaveLength(4);
    const [a, b] = await h.children();
    for (const id of [a!, b!]) {
      const finished = recordsOf(await h.records(id), 'tool.finished')[0]!;
      expect(finished.data).toMatchObject({ name: 'meet', outcome: 'ok' });
    }
    // Results in the order of the calls.
    const results = h.session.state.messages.view()[2]!;
    expect(results.role).toBe('user');
    expect(
      (results.content as { tool_use_id: string; content: string }[]).map((b) => [b.tool_use_id, b.content]),
    ).toEqual([
      ['toolu_a', 'a is done'],
      ['toolu_b', 'b is done'],
    ]);
    expect((await verifyTree(h.store, h.session.id)).ok).toBe(true);
  });

  it('a .claude/agents agent: its tools list is what its requests offer, its body is its system prompt', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'reloop-agents-'));
    dirs.push(cwd);
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    await writeFile(
      path.join(cwd, '.claude', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: Reviews code and says what is wrong.\ntools: echo\nmodel: haiku\n---\nYou are a strict reviewer. Report every bug.\n',
    );
    const agents = await loadAgents({ cwd });
    const meet = meetingTool(1);
    const h = await parentSession(
      {
        turns: [
          taskTurn([{ id: 'toolu_r', prompt: 'review sum.js', agent: 'reviewer' }]),
          textTurn('reviewed'),
        ],
        children: { toolu_r: { turns: [textTurn('sum subtracts')] } },
      },
      { cwd, subAgents: { agents }, tools: [echoTool, meet.tool] },
    );
    await h.session.submit('review');
    const childRequest = h.client.forChild('toolu_r').requests[0]!;
    expect(childRequest.tools.map((t) => t.name)).toEqual(['echo']);
    expect(childRequest.system).toBe('You are a strict reviewer. Report every bug.');
    expect(childRequest.model).toBe('claude-haiku-4-5');
    const [childId] = await h.children();
    const child = await h.records(childId);
    const started = recordsOf(child, 'run.started')[0]!;
    expect(started.data.config.system).toBe('You are a strict reviewer. Report every bug.');
    expect(started.data.config.model).toBe('claude-haiku-4-5');
    expect(recordsOf(await h.records(), 'child.started')[0]!.data.agent).toBe('reviewer');
    expect(h.client.requests[0]!.tools.find((t) => t.name === 'Task')!.description).toContain(
      '- reviewer: Reviews code and says what is wrong. (Tools: echo)',
    );
  });

  it('a failing child: an is_error result that says how it ended, and the parent goes on', async () => {
    const h = await parentSession({
      turns: [
        taskTurn([{ id: 'toolu_f', prompt: 'try' }]),
        textTurn('the child failed; I will do it myself'),
      ],
      children: {
        toolu_f: {
          turns: [{ error: { status: 400, type: 'invalid_request_error', message: 'bad request' } }],
        },
      },
    });
    const res = await h.session.submit('delegate');
    expect(res).toMatchObject({ status: 'completed', turns: 2 });
    const [childId] = await h.children();
    const parent = await h.records();
    expect(recordsOf(parent, 'child.finished')[0]!.data).toMatchObject({
      status: 'failed',
      reason: 'model_error',
    });
    const result = recordsOf(parent, 'tool.finished')[0]!.data;
    expect(result.outcome).toBe('error');
    expect(result.result.isError).toBe(true);
    expect(result.result.content).toMatch(
      new RegExp(`^\\[sub-agent general-purpose failed: model_error\\] session ${childId}: `),
    );
    expect(recordsOf(await h.records(childId), 'run.ended')[0]!.data).toMatchObject({
      status: 'failed',
      reason: 'model_error',
    });
    expect((await verifyTree(h.store, h.session.id)).ok).toBe(true);
  });

  it('an unknown subagent_type is an is_error result; no child is started', async () => {
    const h = await parentSession({
      turns: [taskTurn([{ id: 'toolu_x', prompt: 'x', agent: 'nope' }]), textTurn('ok')],
    });
    expect((await h.session.submit('go')).status).toBe('completed');
    const parent = await h.records();
    expect(recordsOf(parent, 'child.started')).toEqual([]);
    expect(recordsOf(parent, 'tool.finished')[0]!.data.result).toEqual({
      content: 'Agent type "nope" not found. Available agents: general-purpose',
      isError: true,
    });
  });

  it('abort during a child reaches the child: both logs record it, the child ends inside the parent run', async () => {
    const wait = untilAbortedTool();
    const h = await parentSession(
      {
        turns: [taskTurn([{ id: 'toolu_w', prompt: 'wait' }])],
        children: { toolu_w: { turns: [toolTurn([{ name: 'wait', input: { what: 'forever' } }])] } },
      },
      { tools: [echoTool, wait.tool] },
    );
    const run = h.session.submit('go');
    await wait.running;
    h.session.abort('stop everything');
    const res = await run;
    expect(res).toMatchObject({ status: 'aborted', reason: 'aborted' });
    const [childId] = await h.children();
    const parent = await h.records();
    const types = parent.map((r) => r.type);
    expect(types.indexOf('abort.requested')).toBeLessThan(types.indexOf('child.finished'));
    expect(types.indexOf('child.finished')).toBeLessThan(types.indexOf('run.ended'));
    expect(recordsOf(parent, 'child.finished')[0]!.data).toMatchObject({
      status: 'aborted',
      reason: 'aborted',
    });
    const child = await h.records(childId);
    expect(recordsOf(child, 'abort.requested')[0]!.data.reason).toBe('aborted by the caller');
    expect(recordsOf(child, 'run.ended')[0]!.data).toMatchObject({ status: 'aborted', reason: 'aborted' });
    expect(recordsOf(child, 'tool.finished')[0]!.data.outcome).toBe('interrupted');
    expect(historyProblems(h.session.state.messages.view())).toEqual([]);
    expect((await verifyTree(h.store, h.session.id)).divergence).toBeNull();
  });

  it("the children's usage counts towards the parent's budget; a child gets what is left of it", async () => {
    const big = { input_tokens: 1_000, output_tokens: 10 };
    const h = await parentSession(
      {
        turns: [taskTurn([{ id: 'toolu_b', prompt: 'spend' }]), textTurn('done')],
        children: { toolu_b: { turns: [{ text: 'spent', stop_reason: 'end_turn', usage: big }] } },
      },
      { settings: { maxBudgetTokens: 500 } },
    );
    const res = await h.session.submit('go');
    // 120 (parent) + 1 010 (child) + 110 (parent): over 500 only with the child counted.
    expect(res).toMatchObject({ status: 'failed', reason: 'budget_exhausted' });
    expect(res.usage.inputTokens).toBe(100 + 1_000 + 100);
    const [childId] = await h.children();
    const child = await h.records(childId);
    expect(recordsOf(child, 'run.started')[0]!.data.config.maxBudgetTokens).toBe(500 - 120);
    expect(recordsOf(child, 'run.ended')[0]!.data.reason).toBe('budget_exhausted');
    expect((await verifyTree(h.store, h.session.id)).ok).toBe(true);
  });

  it('each child has its own maxTurns', async () => {
    const h = await parentSession(
      {
        turns: [taskTurn([{ id: 'toolu_m', prompt: 'loop' }]), textTurn('ok')],
        children: { toolu_m: { turns: [toolTurn([{ name: 'echo', input: { text: '1' } }])] } },
      },
      { subAgents: { agents: new AgentCatalog(), maxTurns: 1 } },
    );
    expect((await h.session.submit('go')).status).toBe('completed');
    const [childId] = await h.children();
    const child = await h.records(childId);
    expect(recordsOf(child, 'run.started')[0]!.data.config.maxTurns).toBe(1);
    expect(recordsOf(child, 'run.ended')[0]!.data.reason).toBe('max_turns_reached');
    expect(recordsOf(await h.records(), 'tool.finished')[0]!.data.result.isError).toBe(true);
  });

  it('at most 10 children at once: ten meet, the 11th starts only when one has ended', async () => {
    const ids = Array.from({ length: 11 }, (_, i) => `toolu_${i}`);
    const meet = meetingTool(10);
    const order: string[] = [];
    const child = (id: string, i: number) =>
      i < 10
        ? [toolTurn([{ name: 'meet', input: { who: id } }]), textTurn(`${id} done`)]
        : [textTurn(`${id} done`)];
    const h = await parentSession(
      {
        turns: [taskTurn(ids.map((id) => ({ id, prompt: id }))), textTurn('all done')],
        children: Object.fromEntries(ids.map((id, i) => [id, { turns: child(id, i) }])),
      },
      {
        tools: [echoTool, meet.tool],
        subAgents: {
          agents: new AgentCatalog(),
          onChildRecord: (c, r) => {
            if (r.type === 'run.started' || r.type === 'run.ended') order.push(`${r.type} ${c}`);
          },
        },
      },
    );
    expect((await h.session.submit('fan out')).status).toBe('completed');
    // Ten children were in their tools together (the meeting needs all ten).
    expect(meet.events.slice(0, 10).every((e) => e.startsWith('enter'))).toBe(true);
    // The eleventh started after the first of them ended.
    const children = await h.children();
    const eleventh = order.indexOf(`run.started ${children[10]}`);
    expect(order.findIndex((e) => e.startsWith('run.ended'))).toBeLessThan(eleventh);
    const results = h.session.state.messages.view()[2]!.content as { content: string }[];
    expect(results.map((b) => b.content)).toEqual(ids.map((id) => `${id} done`));
  });
});
