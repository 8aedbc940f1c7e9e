import { describe, expect, it } from 'vitest';
import { forkSession } from '../../src/replay/fork.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { fold } from '../../src/store/evolve.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { emptySessionState, type SessionState } from '../../src/store/sessionState.ts';
import { representativeLogs } from '../replay/support/representativeLogs.ts';
import { echoTool, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';
import { asV1 } from './support/asV1.ts';

/** A state with its lists as arrays, for comparison. */
function plain(s: SessionState) {
  return { ...s, messages: s.messages.toArray(), denials: s.denials.toArray(), runs: s.runs.toArray() };
}

describe('schema v2: each piece of content stored once', () => {
  it('a tool result, a tool input and an assistant text each appear once in the log', async () => {
    const result = `R${'r'.repeat(200_000)}`;
    const input = `I${'i'.repeat(200_000)}`;
    const said = `S${'s'.repeat(50_000)}`;
    const big = {
      ...echoTool,
      name: 'big',
      async call() {
        return { content: result };
      },
    };
    const h = await scriptedSession(
      [
        {
          content: [
            { type: 'text', text: said },
            { type: 'tool_use', id: 't1', name: 'big', input: { text: input } },
          ],
          stop_reason: 'tool_use',
        },
        textTurn('done'),
      ],
      { tools: [big] },
    );
    await h.session.submit('go');
    const text = (await h.records()).map((r) => JSON.stringify(r)).join('\n');
    const count = (needle: string) => text.split(needle).length - 1;
    expect(count(result)).toBe(1);
    expect(count(input)).toBe(1);
    expect(count(said)).toBe(1);
    // The log is the content plus a small envelope per record, not a multiple of it.
    expect(text.length / (result.length + input.length + said.length)).toBeLessThan(1.05);
    // The history the fold rebuilds still has all of it where it belongs.
    const [, assistant, results] = h.session.state.messages.view();
    expect(assistant).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: said },
        { type: 'tool_use', id: 't1', name: 'big', input: { text: input } },
      ],
    });
    expect(results).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 't1', content: result }],
    });
    expect((await verifyReplay(await h.records())).divergence).toBeNull();
  });

  it('a tool input over the cap is not run: an is_error result that says why, the input logged once', async () => {
    let ran = false;
    const write = {
      ...echoTool,
      name: 'Write',
      isReadOnly: false,
      async call() {
        ran = true;
        return { content: 'written' };
      },
    };
    const huge = 'w'.repeat(3 * 1024 * 1024);
    const h = await scriptedSession(
      [toolTurn([{ name: 'Write', input: { text: huge }, id: 'w1' }]), textTurn('ok')],
      { tools: [write] },
    );
    expect((await h.session.submit('write it')).status).toBe('completed');
    expect(ran).toBe(false);
    const records = await h.records();
    const finished = records.find((r) => r.type === 'tool.finished')!;
    expect(finished.data).toMatchObject({
      outcome: 'invalid_input',
      result: {
        isError: true,
        content:
          'Input for Write is 3.0 MB, over the 1.0 MB limit for one tool call: it was not run. Do the work in smaller calls.',
      },
    });
    expect(records.some((r) => r.type === 'tool.started')).toBe(false);
    const text = records.map((r) => JSON.stringify(r)).join('\n');
    expect(text.split(huge).length - 1).toBe(1);
  });

  it('message.appended refers to its response and its tool results by seq', async () => {
    const h = await scriptedSession([
      toolTurn([{ name: 'echo', input: { text: 'a' }, id: 'e1' }]),
      textTurn('done'),
    ]);
    await h.session.submit('go');
    const records = await h.records();
    const seqOf = (type: string) => records.find((r) => r.type === type)!.seq;
    const appended = records.filter((r) => r.type === 'message.appended').map((r) => r.data);
    expect(appended).toEqual([
      { origin: 'assistant', response: seqOf('model.responded') },
      { origin: 'tool_results', results: [seqOf('tool.finished')] },
      { origin: 'assistant', response: records.filter((r) => r.type === 'model.responded')[1]!.seq },
    ]);
    expect(records.find((r) => r.type === 'tool.started')!.data).not.toHaveProperty('input');
  });

  it('v1 and v2 of the same logs fold to the same state and both verify', async () => {
    for (const [name, v2] of Object.entries(await representativeLogs())) {
      const v1 = asV1(v2);
      expect(plain(fold(v1, emptySessionState())), name).toEqual(plain(fold(v2, emptySessionState())));
      expect((await verifyReplay(v1)).divergence, name).toBeNull();
      expect((await verifyReplay(v2)).divergence, name).toBeNull();
    }
  });

  it('a reference that does not resolve is an error naming the record, not a silent gap', async () => {
    const h = await scriptedSession([
      toolTurn([{ name: 'echo', input: { text: 'a' }, id: 'e1' }]),
      textTurn('done'),
    ]);
    await h.session.submit('go');
    const records = await h.records();
    const i = records.findIndex((r) => r.type === 'message.appended' && r.data.origin === 'tool_results');
    const broken = records.slice();
    broken[i] = { ...records[i]!, data: { origin: 'tool_results', results: [2] } } as LogRecord;
    expect(() => fold(broken, emptySessionState())).toThrow(
      `seq ${records[i]!.seq}: refers to tool.finished seq 2, which is not a tool result waiting to be appended`,
    );
    const report = await verifyReplay(broken);
    expect(report.divergence).toMatchObject({ seq: records[i]!.seq });
  });

  it('a fork of a v2 session is sealed anew and verifies', async () => {
    const h = await scriptedSession([
      toolTurn([{ name: 'echo', input: { text: 'a' }, id: 'e1' }]),
      textTurn('done'),
    ]);
    await h.session.submit('go');
    const records = await h.records();
    const fork = await forkSession(h.store, h.session.id, records.length);
    const copy: LogRecord[] = [];
    for await (const r of h.store.read(fork)) copy.push(r);
    const report = await verifyReplay(copy);
    expect(report).toMatchObject({ ok: true, sealed: true });
    expect(copy[1]!.h).not.toBe(records[1]!.h);
  });
});
