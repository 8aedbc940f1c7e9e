import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { resealed } from '../../src/store/seal.ts';
import { parseRecordLine } from '../../src/store/validate.ts';
import { fixedStopHook, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

async function recordedSession() {
  const h = await scriptedSession(
    [
      toolTurn([
        { name: 'echo', input: { text: 'a' } },
        { name: 'echo', input: { text: 'b' } },
      ]),
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      { text: 'partial', stop_reason: 'max_tokens', usage: { input_tokens: 10, output_tokens: 8192 } },
      { text: 'partial again', stop_reason: 'max_tokens', usage: { input_tokens: 10, output_tokens: 64000 } },
      textTurn('done'),
      textTurn('really done'),
    ],
    { stopHooks: [fixedStopHook([{ decision: 'block', reason: 'run the tests' }, { decision: 'allow' }])] },
  );
  const res = await h.session.submit('fix it');
  expect(res.status).toBe('completed');
  return { h, records: await h.records() };
}

describe('verify replay', () => {
  it('passes on an unchanged session', async () => {
    const { records } = await recordedSession();
    const report = await verifyReplay(records);
    expect(report.divergence).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.transitions).toBe(records.filter((r) => r.type === 'transition').length);
  });

  it('fails at the seq of the first changed transition when one recorded response changes', async () => {
    const { records } = await recordedSession();
    // The first response asked for tools; make it a plain answer instead.
    const i = records.findIndex((r) => r.type === 'model.responded');
    const changed = structuredClone(records) as LogRecord[];
    const rec = changed[i] as Extract<LogRecord, { type: 'model.responded' }>;
    rec.data.response.content = [{ type: 'text', text: 'no tools today' }];
    rec.data.response.stopReason = 'end_turn';
    // Unsealed, the seal of the edited record gives it away at once.
    expect((await verifyReplay(changed)).divergence?.seq).toBe(rec.seq);
    // Sealed anew (as whoever edits a log on purpose would), re-driving the chart finds it.
    const report = await verifyReplay(resealed(changed));
    expect(report.ok).toBe(false);
    const firstTransitionAfter = changed.find((r) => r.seq > rec.seq && r.type === 'transition')!;
    expect(report.divergence?.seq).toBe(firstTransitionAfter.seq);
    expect(report.divergence?.expected).toMatchObject({ reason: 'tool_use_requested' });
    expect(report.divergence?.actual).toMatchObject({ reason: 'finish_requested' });
  });

  it('fails at the right seq when a guard of the machine changes', async () => {
    const { records } = await recordedSession();
    // A code change: max_tokens is never escalated any more.
    const changedMachine = queryLoopMachine.provide({ guards: { maxTokensCanEscalate: () => false } });
    const report = await verifyReplay(records, { machine: changedMachine });
    expect(report.ok).toBe(false);
    const escalation = records.find(
      (r) => r.type === 'transition' && r.data.reason === 'max_tokens_escalation',
    )!;
    expect(report.divergence?.seq).toBe(escalation.seq);
    // The transitions before the divergence matched, and are counted.
    expect(report.transitions).toBe(
      records.filter((r) => r.type === 'transition' && r.seq < escalation.seq).length,
    );
    expect(report.divergence?.actual).toMatchObject({ reason: 'max_tokens_recovery' });
  });

  it('verifies a prefix of a log that stops mid-run (a crash)', async () => {
    const { records } = await recordedSession();
    for (const cut of [5, 9, 14, 20, records.length - 2]) {
      const report = await verifyReplay(records.slice(0, cut));
      expect(report.divergence, `cut at ${cut}`).toBeNull();
    }
  });
});

describe('verify re-derives derived records from the facts they came from', () => {
  const golden = (file: string) =>
    readFileSync(new URL(`../fixtures/logs/${file}`, import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line, i) => parseRecordLine(line, { file, line: i + 1 }));

  it('a compaction whose response was replaced by a tool_use diverges at compaction.finished (v1 log)', async () => {
    const records = golden('v1-compaction-stophook.jsonl');
    const i = records.findIndex((r) => r.type === 'model.responded' && r.data.purpose === 'compaction');
    const edited = structuredClone(records);
    const rec = edited[i] as RecordOf<'model.responded'>;
    rec.data.response.content = [{ type: 'tool_use', id: 'x', name: 'Bash', input: { command: 'rm -rf /' } }];
    rec.data.response.stopReason = 'tool_use';
    const report = await verifyReplay(edited);
    const finished = records.find((r) => r.seq > rec.seq && r.type === 'compaction.finished')!;
    expect(report.divergence).toMatchObject({ seq: finished.seq });
    expect(report.divergence?.detail).toMatch(/compaction/);
  });

  it('a compaction summary that is not the response text diverges at compaction.finished (v1 log)', async () => {
    const records = golden('v1-compaction-stophook.jsonl');
    const edited = structuredClone(records);
    const done = edited.find((r) => r.type === 'compaction.finished') as RecordOf<'compaction.finished'>;
    if (!done.data.ok) throw new Error('golden compaction should succeed');
    done.data.summary = 'a summary nobody wrote';
    expect((await verifyReplay(edited)).divergence).toMatchObject({ seq: done.seq });
  });

  it('the same edit on a v2 log, sealed anew, diverges at compaction.finished', async () => {
    const h = await scriptedSession(
      [
        toolTurn([{ name: 'echo', input: { text: 'z'.repeat(3000) } }]),
        { text: 'summary of it', for: 'compaction', usage: { input_tokens: 10, output_tokens: 5 } },
        textTurn('done'),
      ],
      { settings: { autoCompactThreshold: 500 } },
    );
    await h.session.submit('go');
    const records = await h.records();
    const i = records.findIndex((r) => r.type === 'model.responded' && r.data.purpose === 'compaction');
    expect(i).toBeGreaterThan(0);
    const edited = structuredClone(records);
    const rec = edited[i] as RecordOf<'model.responded'>;
    rec.data.response.content = [{ type: 'tool_use', id: 'x', name: 'echo', input: { text: 'x' } }];
    const finished = records.find((r) => r.seq > rec.seq && r.type === 'compaction.finished')!;
    expect((await verifyReplay(resealed(edited))).divergence).toMatchObject({ seq: finished.seq });
  });
});
