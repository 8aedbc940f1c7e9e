import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importTranscripts } from '../../src/import/index.ts';
import { historyProblems } from '../../src/model/history.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { evolve } from '../../src/store/evolve.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { type LogRecord, CURRENT_SCHEMA_VERSION as V } from '../../src/store/records.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { chartOf, transitionKey } from '../../src/viz/edgeCatalog.ts';
import { type Block, Transcript, text, toolUse } from '../support/claudeCodeTranscript.ts';
import { readLog } from '../support/logRecords.ts';
import { FIXTURES, SID, transcriptFile } from './support/fixtures.ts';
import { mapLines } from './support/map.ts';

const chart = chartOf();
const EDGES = new Set(chart.edges.map((e) => e.key));
const FINAL = new Set(chart.states.filter((s) => s.final).map((s) => s.id));

/** What must hold of any imported session, whatever transcript it came from. */
function checkSession(log: readonly LogRecord[], { history = true } = {}): void {
  let state: string | null = null;
  let last: string | null = null;
  let folded = emptySessionState();
  for (const r of log) {
    folded = evolve(folded, r);
    if (r.type === 'run.started') {
      state = chart.initial;
      last = null;
    } else if (r.type === 'transition') {
      // The property: an inferred transition is an edge of the chart, and the walk is connected.
      expect(EDGES.has(transitionKey(r.data)), `seq ${r.seq}: ${transitionKey(r.data)}`).toBe(true);
      expect(r.data.from, `seq ${r.seq}`).toBe(state);
      state = r.data.to;
      last = r.data.reason;
    } else if (r.type === 'run.ended') {
      if (r.data.reason === 'interrupted') {
        // Closed as resume closes a dead run: the next run answers its calls.
        expect(FINAL.has(state!)).toBe(false);
        continue;
      }
      expect(FINAL.has(state!), `seq ${r.seq}: run ended in ${state}`).toBe(true);
      expect(r.data.reason).toBe(last);
      // A run that ended leaves a history the Messages API accepts.
      if (history) expect(historyProblems(folded.messages.view()), `seq ${r.seq}`).toEqual([]);
    }
  }
  const ats = log.map((r) => r.at);
  expect(ats).toEqual([...ats].sort((a, b) => a - b));
}

describe('every fixture', async () => {
  const store = new MemoryEventStore();
  const report = await importTranscripts(store, [FIXTURES]);
  const all = report.sessions.flatMap((s) => [s, ...s.children]);

  it('imports every transcript of the fixture folder, sub-agents as children', () => {
    expect(report.failures).toEqual([]);
    expect(report.sessions).toHaveLength(Object.keys(SID).length);
    expect(all.length).toBeGreaterThan(report.sessions.length);
  });

  it.each(
    all.map((s) => [s.sessionId, s] as const),
  )('%s: transitions are chart edges on a connected walk', async (id, s) => {
    const log = await readLog(store, id);
    expect(log).toHaveLength(s.records);
    expect(log.filter((r) => r.type === 'transition')).toHaveLength(s.transitions);
    expect(log.filter((r) => r.type === 'import.unmapped')).toHaveLength(s.unmapped);
    checkSession(log);
    const verified = await verifyReplay(log);
    expect(verified.divergence).toBeNull();
    expect(verified.transitions).toBe(s.transitions);
  });

  it('accounts for every line of a transcript: mapped, counted as bookkeeping, or kept as unmapped', async () => {
    for (const sid of Object.values(SID)) {
      const [created] = await readLog(store, `cc-${sid}`);
      if (created?.type !== 'session.created') throw new Error('no session.created');
      const from = created.data.importedFrom!;
      const lines = readFileSync(transcriptFile(sid), 'utf8')
        .split('\n')
        .filter((l) => l.trim()).length;
      expect(from.lines.total).toBe(lines);
      expect(from.file).toBe(transcriptFile(sid));
      expect(from.sessionId).toBe(sid);
    }
  });

  it('leaves lines unmapped only where the fixture put lines it cannot map', () => {
    const unmapped = all.filter((s) => s.unmapped > 0).map((s) => s.sessionId);
    expect(unmapped).toEqual([`cc-${SID.malformed}`]);
  });

  it('reaches the reasons the issue names, from real-shaped transcripts', async () => {
    const reasons = new Set<string>();
    for (const s of all)
      for (const r of await readLog(store, s.sessionId))
        if (r.type === 'transition') reasons.add(r.data.reason);
    for (const r of [
      'query_built',
      'tool_use_requested',
      'tool_result_continuation',
      'auto_compact',
      'compacted',
      'compact_retry',
      'transport_retry',
      'backoff_elapsed',
      'stop_hook_continuation',
      'stop_hook_prevented',
      'finish_requested',
      'completed',
      'aborted',
      'model_error',
      'prompt_too_long',
      'refused',
      'max_tokens_recovery',
      'max_tokens_escalation',
      'max_tokens_exhausted',
      'pause_turn_continuation',
    ]) {
      expect(reasons, r).toContain(r);
    }
  });
});

/** A small deterministic PRNG: the same seed writes the same transcript. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/**
 * Random transcripts: any order of the line kinds Claude Code writes, including orders it
 * would not (results for calls never made, a summary with no boundary, stray hook lines).
 */
function randomTranscript(seed: number): Transcript {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const t = new Transcript({ sessionId: `fuzz-${seed}`, salt: seed % 65_536 });
  let open: string[] = [];
  let n = 0;
  const steps = 5 + Math.floor(rnd() * 30);
  for (let i = 0; i < steps; i++) {
    const kind = pick([
      'prompt',
      'prompt',
      'text',
      'tools',
      'tools',
      'result',
      'result',
      'retry',
      'apiError',
      'compaction',
      'summaryOnly',
      'boundaryOnly',
      'interrupt',
      'interruptTools',
      'stopSummary',
      'stopPrevented',
      'feedback',
      'meta',
      'bookkeeping',
      'garbage',
      'stopReason',
    ] as const);
    switch (kind) {
      case 'prompt':
        t.prompt(`prompt ${i}`);
        break;
      case 'text':
        t.assistant([text(`answer ${i}`)]);
        break;
      case 'tools': {
        const count = 1 + Math.floor(rnd() * 3);
        const blocks: Block[] = [text('calling')];
        open = [];
        for (let k = 0; k < count; k++) {
          const id = `toolu_${seed}_${n++}`;
          open.push(id);
          blocks.push(toolUse(id, pick(['Read', 'Bash', 'Edit', 'Task']), { k }));
        }
        t.assistant(blocks);
        break;
      }
      case 'result': {
        const id = open.length && rnd() < 0.9 ? open.shift()! : `toolu_stray_${i}`;
        t.toolResult(id, rnd() < 0.2 ? '[Request interrupted by user for tool use]' : `result ${i}`, {
          isError: rnd() < 0.3,
        });
        break;
      }
      case 'retry':
        t.system('api_error', { error: { status: pick([429, 500, 529]) }, retryInMs: 100, retryAttempt: 1 });
        break;
      case 'apiError':
        t.line({
          type: 'assistant',
          isApiErrorMessage: true,
          message: {
            id: `e${i}`,
            model: '<synthetic>',
            content: [text(pick(['API Error: 529 Overloaded', 'prompt is too long: 3 tokens > 2 maximum']))],
          },
        });
        break;
      case 'compaction':
        t.compaction(`summary ${i}`);
        break;
      case 'summaryOnly':
        t.user('This session is being continued from a previous conversation that ran out of context.', {
          isCompactSummary: true,
        });
        break;
      case 'boundaryOnly':
        t.system('compact_boundary', { compactMetadata: { trigger: 'auto' } });
        break;
      case 'interrupt':
        t.interrupt();
        break;
      case 'interruptTools':
        t.interrupt(true);
        break;
      case 'stopSummary':
        t.stopHookSummary();
        break;
      case 'stopPrevented':
        t.stopHookSummary({ prevented: true, stopReason: 'no' });
        break;
      case 'feedback':
        t.user([text('Stop hook feedback:\nagain')], { isMeta: true });
        break;
      case 'meta':
        t.user('<command-name>/clear</command-name>');
        break;
      case 'bookkeeping':
        t.bare({ type: pick(['progress', 'file-history-snapshot', 'queue-operation']) });
        break;
      case 'garbage':
        t.raw(pick(['{"broken', '[]', '{"type":"mystery"}']));
        break;
      case 'stopReason':
        t.assistant([text('x')], { stopReason: pick(['refusal', 'max_tokens', 'pause_turn', 'end_turn']) });
        break;
    }
  }
  return t;
}

describe('any transcript, however its lines come', () => {
  it.each(
    Array.from({ length: 300 }, (_, i) => i + 1),
  )('random transcript %i maps onto chart edges only', async (seed) => {
    const mapped = mapLines(randomTranscript(seed));
    const store = new MemoryEventStore();
    const log: LogRecord[] = [
      {
        v: V,
        seq: 1,
        at: mapped.firstAt ?? 0,
        session: 's',
        run: null,
        type: 'session.created',
        data: {
          importedFrom: {
            format: 'claude-code',
            file: 'f',
            sessionId: 's',
            version: null,
            bytes: 0,
            records: mapped.drafts.length + 1,
            lines: { total: 0, bookkeeping: {}, unmapped: 0, malformed: 0 },
          },
        },
      },
      ...mapped.drafts.map((d, i) => ({ ...d, v: V, seq: i + 2, session: 's' }) as LogRecord),
    ];
    // The store validates every record: an import never writes what it cannot read back.
    await store.append('s', log, { expectedSeq: 0 });
    // Lines in orders Claude Code never writes can leave odd histories; the walk must still hold.
    checkSession(log, { history: false });
    // Verified as read back: the store seals what it writes (schema v2).
    expect((await verifyReplay(await readLog(store, 's'))).divergence).toBeNull();
  });
});
