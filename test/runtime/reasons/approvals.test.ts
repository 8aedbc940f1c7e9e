import { describe, expect, it } from 'vitest';
import { historyProblems } from '../../../src/model/history.ts';
import { verifyReplay } from '../../../src/replay/verify.ts';
import { AwaitingApprovalError, decideApproval, pendingApprovals } from '../../../src/runtime/approvals.ts';
import { Session } from '../../../src/runtime/session.ts';
import { echoTool, scriptedSession } from '../../support/harness.ts';
import { askForGuarded, counted, reasonSpec, recordsOf, text, tools, toolUse } from './reasonSpec.ts';

const spec = reasonSpec('approvals');

const parkedRun = ['query_built', 'tool_use_requested', 'awaiting_approval'] as const;
const resumedRun = [
  'tool_batch_resumed',
  'tool_result_continuation',
  'query_built',
  'finish_requested',
  'completed',
] as const;

describe('durable approvals: an ask nobody can answer parks the run', () => {
  it('parks, is approved, and the resumed run runs the same batch once', async () => {
    const { calls, tool } = counted();
    const h = await scriptedSession(
      [
        tools([toolUse('t1', 'echo', { text: 'first' }), toolUse('t2', 'guarded', { text: 'deploy' })]),
        text('deployed'),
      ],
      { tools: [tool, echoTool], canUseTool: askForGuarded },
    );
    const parked = await h.session.submit('deploy it');
    let records = await spec.expectRun(h, parked, [...parkedRun]);
    expect(parked.status).toBe('paused');
    expect(calls).toEqual([]);
    // Nothing ran, not even the allowed call: the batch waits whole.
    expect(recordsOf(records, 'tool.started')).toEqual([]);
    expect(recordsOf(records, 'approval.requested').map((r) => r.data)).toEqual([
      {
        toolUseId: 't2',
        tool: 'guarded',
        input: { text: 'deploy' },
        message: 'guarded touches the outside world',
      },
    ]);
    expect(pendingApprovals(h.session.state).map((a) => a.toolUseId)).toEqual(['t2']);

    // A new prompt cannot jump the queue; nothing is written.
    const before = h.session.state.lastSeq;
    await expect(h.session.submit('something else')).rejects.toBeInstanceOf(AwaitingApprovalError);
    expect(await h.store.lastSeq(h.session.id)).toBe(before);
    const { pending } = await decideApproval(h.store, h.session.id, 't2', { allow: true, by: 'alice' });
    expect(pending).toEqual([]);

    const resumed = await Session.open(h.session.id, {
      store: h.store,
      model: h.client,
      tools: [tool, echoTool],
      canUseTool: askForGuarded,
      clock: h.clock,
    });
    const done = await resumed.submit();
    expect(done.status).toBe('completed');
    expect(calls).toEqual(['deploy']);
    records = await h.records();
    expect(records.filter((r) => r.seq > before).find((r) => r.type === 'approval.decided')).toMatchObject({
      run: null,
      data: { toolUseId: 't2', decision: 'allow', by: 'alice' },
    });
    const transitions = recordsOf(records, 'transition')
      .filter((r) => r.run === done.runId)
      .map((r) => r.data.reason);
    expect(transitions).toEqual([...resumedRun]);
    expect(
      recordsOf(records, 'permission.decided')
        .filter((r) => r.run === done.runId)
        .map((r) => [r.data.toolUseId, r.data.resolved, r.data.by]),
    ).toEqual([
      ['t1', 'allow', 'rule'],
      ['t2', 'allow', 'alice'],
    ]);
    expect((await verifyReplay(records)).ok).toBe(true);
  });

  it('deny: the call gets an is_error result with the message and the loop goes on', async () => {
    const { calls, tool } = counted();
    const h = await scriptedSession(
      [tools([toolUse('t1', 'guarded', { text: 'rm' })]), text('ok, not doing it')],
      {
        tools: [tool],
        canUseTool: askForGuarded,
      },
    );
    const parked = await h.session.submit('clean up');
    await spec.expectRun(h, parked, [...parkedRun]);
    await decideApproval(h.store, h.session.id, 't1', { allow: false, by: 'bob', message: 'not on prod' });
    const reopened = await Session.open(h.session.id, {
      store: h.store,
      model: h.client,
      tools: [tool],
      canUseTool: askForGuarded,
      clock: h.clock,
    });
    const h2 = {
      ...h,
      session: reopened,
      historyProblems: () => historyProblems(reopened.state.messages.view()),
    };
    const done = await h2.session.submit();
    await spec.expectRun(h2, done, [...resumedRun]);
    expect(calls).toEqual([]);
    const result = h2.session.state.messages.at(2)!.content;
    expect(result).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 't1',
        content: 'Permission to use guarded was denied: not on prod',
        is_error: true,
      },
    ]);
    expect((await verifyReplay(await h.records())).ok).toBe(true);
  });

  it('resuming before anyone answered parks again, asking once', async () => {
    const { tool } = counted();
    const h = await scriptedSession([tools([toolUse('t1', 'guarded', { text: 'x' })]), text('done')], {
      tools: [tool],
      canUseTool: askForGuarded,
    });
    await h.session.submit('go');
    const again = await h.session.submit();
    expect(again).toMatchObject({ status: 'paused', reason: 'awaiting_approval' });
    const reasons = recordsOf(await h.records(), 'transition')
      .filter((r) => r.run === again.runId)
      .map((r) => r.data.reason);
    expect(reasons).toEqual(['tool_batch_resumed', 'awaiting_approval']);
    expect(pendingApprovals(h.session.state)).toHaveLength(1);
    await expect(
      decideApproval(h.store, h.session.id, 'nope', { allow: true, by: 'x' }),
    ).rejects.toMatchObject({ code: 'APPROVAL_NOT_FOUND' });
    await decideApproval(h.store, h.session.id, 't1', { allow: true, by: 'x' });
    await expect(decideApproval(h.store, h.session.id, 't1', { allow: false, by: 'y' })).rejects.toThrow(
      /already approved by x/,
    );
    expect((await verifyReplay(await h.records())).ok).toBe(true);
  });

  it('with unattendedAsk "deny" the ask is denied as before', async () => {
    const { tool } = counted();
    const h = await scriptedSession([tools([toolUse('t1', 'guarded', { text: 'x' })]), text('fine')], {
      tools: [tool],
      canUseTool: askForGuarded,
      unattendedAsk: 'deny',
    });
    const res = await h.session.submit('go');
    expect(res.status).toBe('completed');
    expect(recordsOf(await h.records(), 'permission.decided')[0]!.data).toMatchObject({
      resolved: 'deny',
      by: 'noninteractive',
    });
  });

  spec.ownedReasonsAsserted();
});
