import { describe, expect, it } from 'vitest';
import type { HookCallback, HookInput, HooksOption } from '../../../src/hooks/types.ts';
import { SUBAGENT_STOP_HOOK_FEEDBACK_PREFIX } from '../../../src/machines/loopMessages.ts';
import { verifyReplay } from '../../../src/replay/verify.ts';
import { Session } from '../../../src/runtime/session.ts';
import { scriptedSession } from '../../support/harness.ts';
import {
  PROMPT_TOO_LONG,
  reasonSpec,
  recordsOf,
  summary,
  text,
  textOfMessages,
  tools,
  toolUse,
  usage,
} from './reasonSpec.ts';

const spec = reasonSpec('hooks');

/** A callback answering `answers` in turn (the last one again after that), and what it was told. */
function answering(...answers: object[]): HookCallback & { inputs: HookInput[] } {
  const inputs: HookInput[] = [];
  let i = 0;
  const fn = async (input: HookInput) => {
    inputs.push(input);
    return answers[Math.min(i++, answers.length - 1)] as never;
  };
  return Object.assign(fn, { inputs });
}
const on = (event: keyof HooksOption, hook: HookCallback, matcher?: string): HooksOption => ({
  [event]: [{ ...(matcher ? { matcher } : {}), hooks: [hook] }],
});

async function verified(h: Awaited<ReturnType<typeof scriptedSession>>) {
  const report = await verifyReplay(await h.records());
  expect(report.divergence).toBeNull();
}

describe('hooks that change what the run does', () => {
  it('UserPromptSubmit block: prompt_blocked, no request, the prompt erased from the history (kept in the log)', async () => {
    const hook = answering({ decision: 'block', reason: 'no production credentials in prompts' }, {});
    const h = await scriptedSession([text('hello')], { hooks: on('UserPromptSubmit', hook) });
    const res = await h.session.submit('deploy with password hunter2');
    const records = await spec.expectRun(h, res, ['prompt_blocked']);
    expect(res.error).toBe(
      'a UserPromptSubmit hook blocked the prompt: no production credentials in prompts',
    );
    expect(h.client.requests).toEqual([]);
    expect(h.session.state.messages.length).toBe(0);
    expect(recordsOf(records, 'user.message')).toHaveLength(1);
    expect(hook.inputs[0]).toMatchObject({
      hook_event_name: 'UserPromptSubmit',
      prompt: 'deploy with password hunter2',
    });
    await verified(h);
    // The next prompt goes through, without the blocked one.
    const next = await h.session.submit('say hello');
    expect(next.reason).toBe('completed');
    expect(textOfMessages(h)).toEqual(['say hello', 'hello']);
  });

  it('SessionStart and UserPromptSubmit context: hook_context, one message before the first request', async () => {
    const start = answering({
      hookSpecificOutput: { hookEventName: 'SessionStart', additionalContext: 'use bun' },
    });
    const prompt = answering({ hookSpecificOutput: { additionalContext: 'sprint: auth' } });
    const h = await scriptedSession([text('ok'), text('ok again')], {
      hooks: { ...on('SessionStart', start), ...on('UserPromptSubmit', prompt) },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['hook_context', 'finish_requested', 'completed']);
    const context =
      'SessionStart hook additional context: use bun\n\nUserPromptSubmit hook additional context: sprint: auth';
    expect(textOfMessages(h)).toEqual(['go', context, 'ok']);
    expect(h.client.requests[0]!.messages.at(-1)).toEqual({
      role: 'user',
      content: [{ type: 'text', text: context }],
    });
    expect(start.inputs[0]).toMatchObject({ source: 'startup', model: expect.any(String) });
    // The next run of the same session object: UserPromptSubmit again, SessionStart not.
    await h.session.submit('more');
    expect(start.inputs).toHaveLength(1);
    expect(prompt.inputs.map((i) => i.prompt)).toEqual(['go', 'more']);
    await verified(h);
    // A session object opened on it later starts again: source resume.
    const again = await Session.open(h.session.id, {
      store: h.store,
      model: h.client,
      hooks: on('SessionStart', start),
      // Opened with the SessionStart hook alone (the recorded setup had UserPromptSubmit too).
      acceptSetupChange: true,
    });
    await again.submit('and again').catch(() => {});
    expect(start.inputs[1]).toMatchObject({ source: 'resume' });
  });

  it('continue: false before the first request: hook_stopped', async () => {
    const start = answering({ continue: false, stopReason: 'maintenance window' });
    const prompt = answering({});
    const h = await scriptedSession([text('never')], {
      hooks: { ...on('SessionStart', start), ...on('UserPromptSubmit', prompt) },
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['hook_stopped']);
    expect(res.error).toBe('a hook stopped the run: maintenance window');
    expect(prompt.inputs).toEqual([]);
    await verified(h);
  });

  it('continue: false in a tool call: hook_stopped after the batch, later calls not run', async () => {
    const pre = answering({ continue: false, stopReason: 'freeze' });
    const h = await scriptedSession(
      [tools([toolUse('a', 'echo', { text: '1' }), toolUse('b', 'echo', { text: '2' })]), text('never')],
      { hooks: on('PreToolUse', pre, 'echo') },
    );
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, ['query_built', 'tool_use_requested', 'hook_stopped']);
    expect(recordsOf(records, 'tool.finished').map((r) => [r.data.toolUseId, r.data.outcome])).toEqual([
      ['a', 'hook_blocked'],
      ['b', 'interrupted'],
    ]);
    expect(recordsOf(records, 'tool.started')).toEqual([]);
    expect(pre.inputs).toHaveLength(1);
    await verified(h);
  });

  it('PreCompact block of auto-compaction: compaction_blocked, the run goes on uncompacted', async () => {
    const pre = answering({ decision: 'block', reason: 'keep the whole transcript' });
    const h = await scriptedSession(
      [tools([toolUse('t1', 'echo', { text: 'x' })], 'tool_use', usage(990, 20)), text('done')],
      {
        settings: { autoCompactThreshold: 1_000 },
        hooks: on('PreCompact', pre),
      },
    );
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compaction_blocked',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(pre.inputs[0]).toMatchObject({ trigger: 'auto', custom_instructions: '' });
    expect(recordsOf(records, 'compaction.finished')).toEqual([]);
    expect(h.session.state.autoCompactFailures).toBe(0);
    await verified(h);
  });

  it('PreCompact block of the compaction after an overflow: compaction_blocked_overflow', async () => {
    const h = await scriptedSession([PROMPT_TOO_LONG], {
      hooks: on('PreCompact', answering({ decision: 'block' })),
    });
    const res = await h.session.submit('go');
    await spec.expectRun(h, res, ['query_built', 'compact_retry', 'compaction_blocked_overflow']);
    expect(res.error).toMatch(
      /PreCompact hook blocked the compaction: blocked by PreCompact hook `callback /,
    );
    await verified(h);
  });

  it('PreCompact continue: false stops the run; SessionStart (compact) context follows a compaction', async () => {
    const stop = await scriptedSession(
      [tools([toolUse('t1', 'echo', { text: 'x' })], 'tool_use', usage(990, 20))],
      {
        settings: { autoCompactThreshold: 1_000 },
        hooks: on('PreCompact', answering({ continue: false, stopReason: 'no compaction today' })),
      },
    );
    await spec.expectRun(stop, await stop.session.submit('go'), [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'hook_stopped',
    ]);
    await verified(stop);

    const again = answering({ hookSpecificOutput: { additionalContext: 'reminder: use bun' } });
    const h = await scriptedSession(
      [tools([toolUse('t1', 'echo', { text: 'x' })], 'tool_use', usage(990, 20)), summary(), text('done')],
      { settings: { autoCompactThreshold: 1_000 }, hooks: on('SessionStart', again, 'compact') },
    );
    const res = await h.session.submit('go');
    const records = await spec.expectRun(h, res, [
      'query_built',
      'tool_use_requested',
      'auto_compact',
      'compacted',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(again.inputs.map((i) => i.source)).toEqual(['compact']);
    expect(textOfMessages(h).slice(-2)).toEqual([
      'SessionStart hook additional context: reminder: use bun',
      'done',
    ]);
    expect(recordsOf(records, 'message.appended').map((r) => r.data.origin)).toContain('hook_context');
    await verified(h);
  });

  it('a sub-agent’s stop checks run SubagentStop: its block is subagent_stop_continuation', async () => {
    const sub = answering({ decision: 'block', reason: 'cite the files you read' }, {});
    const stop = answering({ decision: 'block', reason: 'never asked in a sub-agent' });
    const h = await scriptedSession([text('found it'), text('found it in a.ts')], {
      hooks: { ...on('SubagentStop', sub, 'reviewer'), ...on('Stop', stop) },
      subAgent: { parent: 'parent-session', agent: 'reviewer' },
    });
    const res = await h.session.submit('find the bug');
    await spec.expectRun(h, res, [
      'query_built',
      'finish_requested',
      'subagent_stop_continuation',
      'query_built',
      'finish_requested',
      'completed',
    ]);
    expect(textOfMessages(h)[2]).toBe(`${SUBAGENT_STOP_HOOK_FEEDBACK_PREFIX}cite the files you read`);
    expect(stop.inputs).toEqual([]);
    expect(sub.inputs[0]).toMatchObject({
      hook_event_name: 'SubagentStop',
      session_id: 'parent-session',
      agent_id: h.session.id,
      agent_type: 'reviewer',
      stop_hook_active: false,
      last_assistant_message: 'found it',
    });
    expect(sub.inputs[1]).toMatchObject({ stop_hook_active: true });
    await verified(h);
  });

  spec.ownedReasonsAsserted();
});
