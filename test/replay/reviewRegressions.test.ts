import { describe, expect, it } from 'vitest';
import { assign } from 'xstate';
import type { ToolBatchResult } from '../../src/machines/context.ts';
import { toolResultsMessage } from '../../src/machines/loopMessages.ts';
import { queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { forkSession } from '../../src/replay/fork.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import type { LogRecord } from '../../src/store/records.ts';
import type { Tool } from '../../src/tools/types.ts';
import { echoTool, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

/** Bugs a review found in verify replay and the runtime; each test failed before its fix. */
describe('verify replay on runs that end in runtime_error', () => {
  it('a policy that throws: the failure is logged and replay takes the same edge (no hang)', async () => {
    const h = await scriptedSession([toolTurn([{ name: 'echo', input: { text: 'a' } }]), textTurn('done')], {
      canUseTool: () => {
        throw new Error('policy broke');
      },
    });
    const res = await h.session.submit('go');
    expect(res).toMatchObject({ status: 'failed', reason: 'runtime_error' });
    const records = await h.records();
    expect(records.some((r) => r.type === 'actor.failed' && r.data.actor === 'runTools')).toBe(true);
    expect((await verifyReplay(records)).divergence).toBeNull();
  });

  it('a budget policy that throws replays as runtime_error, not as a completed run', async () => {
    const h = await scriptedSession([textTurn('done')], {
      budgetPolicy: () => {
        throw new Error('budget broke');
      },
    });
    expect((await h.session.submit('go')).reason).toBe('runtime_error');
    expect((await verifyReplay(await h.records())).divergence).toBeNull();
  });
});

describe('aborts before a run’s first transition', () => {
  it('an abort while a resumed run re-runs a read-only tool is seen by replay', async () => {
    const h = await scriptedSession([
      toolTurn([{ name: 'echo', input: { text: 'a' }, id: 't1' }]),
      textTurn('done'),
    ]);
    await h.session.submit('go');
    const started = (await h.records()).find((r) => r.type === 'tool.started')!;
    const forkId = await forkSession(h.store, h.session.id, started.seq, counterIds('f_'));
    let s!: Session;
    const abortingEcho: Tool<{ text: string }> = {
      ...echoTool,
      async call(i) {
        s.abort('esc during the re-run');
        return { content: `echo: ${i.text}` };
      },
    };
    s = await Session.open(forkId, {
      store: h.store,
      model: new ScriptedModelClient(parseScript({ turns: [textTurn('x')] })),
      clock: new VirtualClock(),
      random: seededRandom(1),
      ids: counterIds('f_'),
      tools: [abortingEcho],
    });
    expect((await s.submit(null)).status).toBe('aborted');
    const fork: LogRecord[] = [];
    for await (const r of h.store.read(forkId)) fork.push(r);
    expect((await verifyReplay(fork)).divergence).toBeNull();
  });

  it('submit with an already-aborted signal aborts at once', async () => {
    const h = await scriptedSession([textTurn('never sent')]);
    const c = new AbortController();
    c.abort();
    const res = await h.session.submit('go', { signal: c.signal });
    expect(res.status).toBe('aborted');
    expect(h.client.requests).toHaveLength(0);
    expect((await verifyReplay(await h.records())).divergence).toBeNull();
  });
});

describe('verify replay compares how a run ends', () => {
  it('a message the code no longer appends at the end of a run is a divergence', async () => {
    const h = await scriptedSession([toolTurn([{ name: 'echo', input: { text: 'a' } }])], {
      settings: { maxTurns: 1 },
    });
    await h.session.submit('go');
    const records = await h.records();
    const noMarker = queryLoopMachine.provide({ actions: { appendMaxTurnsMarker: () => {} } });
    const report = await verifyReplay(records, { machine: noMarker });
    const marker = records.find(
      (r) => r.type === 'message.appended' && r.data.origin === 'max_turns_marker',
    )!;
    expect(report.divergence?.seq).toBe(marker.seq);
  });

  it('a different turn count at the end is a divergence at run.ended', async () => {
    const h = await scriptedSession([toolTurn([{ name: 'echo', input: { text: 'a' } }]), textTurn('done')]);
    await h.session.submit('go');
    const records = await h.records();
    // The turn's results are still appended; only the turn count is lost.
    const noCount = queryLoopMachine.provide({
      actions: {
        appendResultsAndContinue: assign(({ context, event }) => ({
          messages: context.messages.append(
            toolResultsMessage((event as unknown as { output: ToolBatchResult }).output.results),
          ),
        })),
      },
    });
    const report = await verifyReplay(records, { machine: noCount });
    expect(report.divergence?.seq).toBe(records.find((r) => r.type === 'run.ended')!.seq);
    expect(report.divergence?.actual).toMatchObject({ turns: 1 });
  });
});
