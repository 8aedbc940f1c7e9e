/**
 * One turn numbering everywhere: the chart's count (RunResult.turns), the fold of the log
 * (run.turns), the viewer's timeline and the CLI's live lines agree, on a path through every
 * edge of the chart.
 */
import { describe, expect, it } from 'vitest';
import { liveOutput } from '../../src/cli/liveOutput.ts';
import { computeEdgePaths } from '../../src/coverage/paths.ts';
import { runScenario } from '../../src/coverage/runScenario.ts';
import { buildScenario } from '../../src/coverage/scenarios.ts';
import { queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { evolve } from '../../src/store/evolve.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { NEW_TURN_REASONS, turnAfter } from '../../src/store/turns.ts';
import { sessionView } from '../../src/viz/sessionView.ts';

/** The chart's actions that move `context.turn` on (queryLoop.setup.ts). */
const TURN_ACTIONS = new Set(['appendResultsAndContinue', 'countPausedTurn']);

describe('turn numbering', () => {
  it('NEW_TURN_REASONS are exactly the reasons of the edges whose actions begin a turn', () => {
    const reasons = new Set<string>();
    for (const node of Object.values(queryLoopMachine.states)) {
      for (const transitions of node.transitions.values()) {
        for (const t of transitions) {
          const names = t.actions.map((a) => (typeof a === 'string' ? a : (a as { type?: string }).type));
          const reason = (t.meta as { reason?: string } | undefined)?.reason;
          if (reason && names.some((n) => n && TURN_ACTIONS.has(n))) reasons.add(reason);
        }
      }
    }
    expect([...reasons].sort()).toEqual([...NEW_TURN_REASONS].sort());
  });

  it('the chart, the fold, the viewer and the CLI count the same turns on every path', async () => {
    const paths = computeEdgePaths().paths;
    expect(paths.length).toBeGreaterThan(20);
    for (const [i, path] of paths.entries()) {
      const run = await runScenario(buildScenario(path), {
        store: new MemoryEventStore(),
        idPrefix: `t${i}-`,
      });
      const what = `${path.edge.id}`;
      let state = emptySessionState();
      const cli: number[] = [];
      const live = liveOutput((line) => {
        const m = / turn (\d+) /.exec(line);
        if (m) cli.push(Number(m[1]));
      });
      for (const r of run.records) {
        state = evolve(state, r);
        // The scenario's run only: a resumed-batch scenario's log starts with a set-up run.
        if (r.run === null || r.run === run.result.runId) live.onRecord(r, state);
      }
      const lastRun = state.currentRun ?? state.runs.last();
      expect(lastRun?.turns, what).toBe(run.result.turns);
      const timeline = sessionView(run.records).timeline.filter((t) => t.run === run.result.runId);
      expect(cli, what).toEqual(timeline.map((t) => t.turn));
      const last = timeline.at(-1)!;
      expect(turnAfter(last.turn, last.reason), what).toBe(run.result.turns);
    }
  }, 120_000);
});
