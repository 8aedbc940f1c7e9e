import { describe, expect, it } from 'vitest';
import { createMachine } from 'xstate';
import { edgeName } from '../../src/coverage/coverage.ts';
import { FACT_VARIANTS } from '../../src/coverage/factVariants.ts';
import { computeEdgePaths, initialSnapshot, replaySteps } from '../../src/coverage/paths.ts';
import { buildScenario, NoDriverError } from '../../src/coverage/scenarios.ts';
import { type FactVariant, TRAVERSAL_SETTINGS } from '../../src/coverage/traversal.ts';
import { type QueryLoopMachine, queryLoopMachine } from '../../src/machines/queryLoop.machine.ts';
import { REASON_DOCS } from '../../src/machines/reasons.ts';
import { edgeCatalog } from '../../src/viz/edgeCatalog.ts';

const report = computeEdgePaths();

/**
 * A copy of the chart with one more edge that can never be taken: it repeats the
 * `stopBlocked` guard after the edge that already takes every blocked stop.
 */
function chartWithShadowedEdge(): QueryLoopMachine {
  const DONE = 'xstate.done.actor.stopChecks';
  type On = Record<string, unknown[]>;
  const config = queryLoopMachine.config;
  const states = config.states as unknown as Record<string, { on: On }>;
  const stop = states.awaitingStopHook!;
  const shadowed = { guard: 'stopBlocked', target: 'failed', meta: { reason: 'runtime_error' } };
  const onDone = [...stop.on[DONE]!, shadowed];
  const copy = {
    ...config,
    states: { ...states, awaitingStopHook: { ...stop, on: { ...stop.on, [DONE]: onDone } } },
  };
  return createMachine(
    copy as never,
    queryLoopMachine.implementations as never,
  ) as unknown as QueryLoopMachine;
}

describe('paths to every edge', () => {
  it('reaches every edge of the chart, each with a path that ends by taking it', () => {
    expect(report.unreached.map(edgeName)).toEqual([]);
    expect(report.paths.map((p) => p.edge.key)).toEqual(report.edges.map((e) => e.key));
    const start = initialSnapshot(queryLoopMachine, TRAVERSAL_SETTINGS);
    for (const p of report.paths) {
      const replayed = replaySteps(queryLoopMachine, p.steps, start).edges.map((e) => e.key);
      expect(replayed).toEqual(p.edges.map((e) => e.key));
      expect(replayed.at(-1)).toBe(p.edge.key);
    }
  });

  it('keeps the shortest path per edge (no prefix of another path takes it sooner)', () => {
    for (const p of report.paths) {
      for (const other of report.paths) {
        const first = other.edges.findIndex((e) => e.key === p.edge.key);
        if (first >= 0)
          expect(first + 1, `${p.edge.id} via ${other.edge.id}`).toBeGreaterThanOrEqual(p.steps.length);
      }
    }
  });

  it('gives every reason of the vocabulary at least one edge, and edges distinct log keys', () => {
    const catalog = edgeCatalog();
    const onEdges = new Set(catalog.map((e) => e.reason));
    expect(Object.keys(REASON_DOCS).filter((r) => !onEdges.has(r))).toEqual([]);
    expect(new Set(catalog.map((e) => e.key)).size).toBe(catalog.length);
  });

  it('reports an edge of a changed chart that no path reaches, by name', () => {
    const machine = chartWithShadowedEdge();
    const changed = computeEdgePaths({ machine, maxDepth: 8 });
    expect(changed.unreached.map(edgeName)).toEqual([
      'awaitingStopHook --[xstate.done.actor.stopChecks / stopBlocked]--> failed (runtime_error)',
    ]);
    expect(changed.paths.length).toBe(report.paths.length);
  });

  it('reports the edges only a removed fact variant could reach', () => {
    const variants = FACT_VARIANTS.filter((v) => v.id !== 'stopChecks.prevent');
    const changed = computeEdgePaths({ variants, maxDepth: 8 });
    expect(changed.unreached.map((e) => e.reason)).toEqual(['stop_hook_prevented']);
  });
});

describe('scenarios from paths', () => {
  it('fails, naming the edge, when a variant the path needs has no driver', () => {
    const variants: FactVariant[] = FACT_VARIANTS.map((v) =>
      v.id === 'stopChecks.prevent' ? { ...v, driver: null } : v,
    );
    const p = computeEdgePaths({ variants }).paths.find((x) => x.edge.reason === 'stop_hook_prevented')!;
    expect(() => buildScenario(p, { variants })).toThrow(NoDriverError);
    expect(() => buildScenario(p, { variants })).toThrow(
      /awaitingStopHook --\[xstate\.done\.actor\.stopChecks \/ stopPrevented\]--> failed \(stop_hook_prevented\).*stopChecks\.prevent/,
    );
  });

  it('scripts the model in request order and runs the path on to a final state', () => {
    const p = report.paths.find((x) => x.edge.reason === 'auto_compact')!;
    const s = buildScenario(p);
    expect(s.steps.slice(0, p.steps.length)).toEqual(p.steps);
    expect(s.expected.at(-1)?.to).toMatch(/^(completed|failed|aborted)$/);
    expect(s.script[0]).toMatchObject({ stop_reason: 'tool_use', for: 'turn' });
    expect(s.script[0]!.content).toEqual([expect.objectContaining({ name: 'bigOutput' })]);
    expect(s.script[1]).toMatchObject({ for: 'compaction' });
    expect(s.schedule.runTools).toEqual([{ kind: 'tool', tool: 'bigOutput' }]);
  });
});
