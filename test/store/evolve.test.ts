import { describe, expect, it } from 'vitest';
import { resolveRunConfig } from '../../src/runtime/config.ts';
import { evolve, fold } from '../../src/store/evolve.ts';
import { CURRENT_SCHEMA_VERSION, type DraftRecord, type LogRecord } from '../../src/store/records.ts';
import { emptySessionState, type SessionState } from '../../src/store/sessionState.ts';

/** Given / when / then for the fold: given these records, when this one arrives, then this state. */
function spec(given: DraftRecord[]) {
  let seq = 0;
  const stamp = (d: DraftRecord): LogRecord =>
    ({ ...d, v: CURRENT_SCHEMA_VERSION, seq: ++seq, at: 1_000 + seq, session: 's1' }) as LogRecord;
  const before = fold(given.map(stamp), emptySessionState());
  return {
    when(record: DraftRecord) {
      const after = evolve(before, stamp(record));
      return { thenState: (check: (s: SessionState, prev: SessionState) => void) => check(after, before) };
    },
  };
}

const run = 'r1';
const started: DraftRecord = {
  type: 'run.started',
  run,
  at: 0,
  data: { config: resolveRunConfig(), autoCompactFailures: 0 },
};
const created: DraftRecord = { type: 'session.created', run: null, at: 0, data: { title: 't' } };
const userMsg: DraftRecord = {
  type: 'user.message',
  run,
  at: 0,
  data: { message: { role: 'user', content: 'hi' } },
};
const usage = {
  inputTokens: 10,
  outputTokens: 5,
  cacheReadInputTokens: 2,
  cacheCreationInputTokens: 0,
  costUsd: 0.01,
};
const responded: DraftRecord = {
  type: 'model.responded',
  run,
  at: 0,
  data: { purpose: 'turn', response: { id: 'm', model: 'x', content: [], stopReason: 'end_turn', usage } },
};

describe('evolve', () => {
  it('given a new session, when a run starts, then it is the current run, in state building', () => {
    spec([created])
      .when(started)
      .thenState((s) => {
        expect(s.currentRun).toMatchObject({ id: run, status: 'running', state: 'building' });
        expect(s.lastSeq).toBe(2);
      });
  });

  it('given a run, when the user message arrives, then it is appended and titles an untitled session', () => {
    spec([started])
      .when(userMsg)
      .thenState((s) => {
        expect(s.messages.view()).toEqual([{ role: 'user', content: 'hi' }]);
        expect(s.title).toBe('hi');
      });
  });

  it('given a run, when a model responds, then its usage adds to the run and the session', () => {
    spec([created, started, responded])
      .when(responded)
      .thenState((s) => {
        expect(s.usage.inputTokens).toBe(20);
        expect(s.usage.costUsd).toBeCloseTo(0.02);
        expect(s.currentRun?.usage.outputTokens).toBe(10);
      });
  });

  it('given a tool started, when it finishes, then it is no longer in flight and its file facts are kept', () => {
    spec([
      started,
      {
        type: 'tool.started',
        run,
        at: 0,
        data: { toolUseId: 't1', name: 'Read', input: {}, index: 0, readOnly: true },
      },
    ])
      .when({
        type: 'tool.finished',
        run,
        at: 0,
        data: {
          toolUseId: 't1',
          name: 'Read',
          index: 0,
          outcome: 'ok',
          result: { content: 'x', isError: false },
          durationMs: 1,
          filesRead: [{ path: '/a', sha256: 'h', mtimeMs: 5 }],
        },
      })
      .thenState((s, prev) => {
        expect(prev.toolsInFlight.get('t1')).toBeDefined();
        expect(s.toolsInFlight.get('t1')).toBeUndefined();
        expect(s.filesRead['/a']).toMatchObject({ sha256: 'h', seq: 3 });
        expect(s.unappendedResults.get('t1')).toMatchObject({ content: 'x', isError: false });
      });
  });

  it('given a denial, when it is decided, then the session keeps it', () => {
    spec([started])
      .when({
        type: 'permission.decided',
        run,
        at: 0,
        data: { toolUseId: 't', name: 'Bash', decision: 'ask', resolved: 'deny', by: 'noninteractive' },
      })
      .thenState((s) => expect(s.denials.view()).toMatchObject([{ name: 'Bash', by: 'noninteractive' }]));
  });

  it('given a history, when compaction succeeds, then the history is replaced; when auto fails, the breaker counts', () => {
    const given = [started, userMsg];
    spec(given)
      .when({
        type: 'compaction.finished',
        run,
        at: 0,
        data: {
          ok: true,
          mode: 'auto',
          summary: 's',
          messages: [{ role: 'user', content: 'summary' }],
          tokensBefore: 100,
          tokensAfter: 10,
        },
      })
      .thenState((s) => {
        expect(s.messages.view()).toEqual([{ role: 'user', content: 'summary' }]);
        expect(s.compactions).toBe(1);
      });
    spec(given)
      .when({ type: 'compaction.finished', run, at: 0, data: { ok: false, mode: 'auto', error: 'boom' } })
      .thenState((s) => expect(s.autoCompactFailures).toBe(1));
  });

  it('given a transition, when the run ends, then it moves to the ended runs with status and reason', () => {
    spec([
      started,
      {
        type: 'transition',
        run,
        at: 0,
        data: { from: 'building', to: 'requesting', trigger: 'e', reason: 'query_built' },
      },
    ])
      .when({
        type: 'run.ended',
        run,
        at: 0,
        data: { status: 'completed', reason: 'completed', turns: 1, usage },
      })
      .thenState((s, prev) => {
        expect(prev.currentRun?.state).toBe('requesting');
        expect(s.currentRun).toBeNull();
        expect(s.runs.view()).toMatchObject([
          { id: run, status: 'completed', reason: 'completed', turns: 1 },
        ]);
      });
  });

  it('returns states with the fields of emptySessionState, in its order, for every kind of record', () => {
    const tool = (toolUseId: string): DraftRecord[] => [
      {
        type: 'tool.started',
        run,
        at: 0,
        data: { toolUseId, name: 'Read', input: {}, index: 0, readOnly: true },
      },
      {
        type: 'tool.finished',
        run,
        at: 0,
        data: {
          toolUseId,
          name: 'Read',
          index: 0,
          outcome: 'ok',
          result: { content: 'x', isError: false },
          durationMs: 1,
        },
      },
    ];
    const drafts: DraftRecord[] = [
      created,
      started,
      userMsg,
      { type: 'transition', run, at: 0, data: { from: 'a', to: 'b', trigger: 'e', reason: 'r' } },
      responded,
      ...tool('t1'),
      {
        type: 'message.appended',
        run,
        at: 0,
        data: { message: { role: 'user', content: 'x' }, origin: 'user' },
      },
      { type: 'run.ended', run, at: 0, data: { status: 'completed', reason: 'completed', turns: 1, usage } },
    ];
    const keys = Object.keys(emptySessionState());
    const runKeys = [
      'id',
      'startedSeq',
      'endedSeq',
      'status',
      'reason',
      'turns',
      'usage',
      'state',
      'config',
      'resumedFrom',
    ];
    let seq = 0;
    let s = emptySessionState();
    for (const d of drafts) {
      s = evolve(s, { ...d, v: CURRENT_SCHEMA_VERSION, seq: ++seq, at: seq, session: 's1' } as LogRecord);
      expect(Object.keys(s), d.type).toEqual(keys);
      if (s.currentRun) expect(Object.keys(s.currentRun), d.type).toEqual(runKeys);
    }
    expect(Object.keys(s.runs.view()[0]!)).toEqual(runKeys);
  });

  it('keys tools in flight and their results by any id, __proto__ and toString included', () => {
    const ids = ['__proto__', 'toString', '2', 'b', 'a'];
    let seq = 0;
    const stamp = (d: DraftRecord) =>
      ({ ...d, v: CURRENT_SCHEMA_VERSION, seq: ++seq, at: seq, session: 's1' }) as LogRecord;
    let s = evolve(emptySessionState(), stamp(started));
    for (const toolUseId of ids) {
      s = evolve(
        s,
        stamp({
          type: 'tool.started',
          run,
          at: 0,
          data: { toolUseId, name: 'T', input: {}, index: 0, readOnly: true },
        }),
      );
    }
    expect([...s.toolsInFlight.keys()]).toEqual(ids);
    const before = s;
    for (const toolUseId of ['b', '__proto__', 'toString']) {
      s = evolve(
        s,
        stamp({
          type: 'tool.finished',
          run,
          at: 0,
          data: {
            toolUseId,
            name: 'T',
            index: 0,
            outcome: 'ok',
            result: { content: toolUseId, isError: false },
            durationMs: 1,
          },
        }),
      );
    }
    expect([...s.toolsInFlight.keys()]).toEqual(['2', 'a']);
    expect([...s.unappendedResults.keys()]).toEqual(['b', '__proto__', 'toString']);
    expect(s.unappendedResults.get('__proto__')).toMatchObject({ content: '__proto__', isError: false });
    // States already handed out keep their maps.
    expect([...before.toolsInFlight.keys()]).toEqual(ids);
    expect(before.unappendedResults.size).toBe(0);
  });

  it('never mutates the state it is given', () => {
    const before = fold([], emptySessionState());
    const frozen = JSON.stringify({ ...before, messages: before.messages.view() });
    evolve(before, { ...userMsg, v: 1, seq: 1, at: 1, session: 's' } as LogRecord);
    expect(JSON.stringify({ ...before, messages: before.messages.view() })).toBe(frozen);
  });
});
