import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeName } from '../../src/coverage/coverage.ts';
import { computeEdgePaths } from '../../src/coverage/paths.ts';
import { loggedTransitions, runScenario } from '../../src/coverage/runScenario.ts';
import { buildScenario } from '../../src/coverage/scenarios.ts';
import { type FileEventStore, openFileStore } from '../../src/store/fileStore.ts';

/**
 * One test per edge of the chart, generated: @xstate/graph finds a shortest path to every
 * edge, each path becomes a scenario on the real runtime, and the run must log exactly the
 * path's transitions. Nothing here lists edges by hand: add an edge to the chart and it gets
 * its test (or, if no fact variant drives it, a failure naming it).
 *
 * The logs go to a file store: $RELOOP_COVERAGE_STORE when set (the coverage gate reads it
 * after the suite, see docs/coverage.md), else a fresh temporary directory.
 */
const report = computeEdgePaths();
const cases = report.paths.map((p, i) => [edgeName(p.edge), p, i] as const);
// Session ids must be unique in the store, also across runs into the same directory.
const nonce = Date.now().toString(36);

let store: FileEventStore;

beforeAll(async () => {
  const dir = process.env.RELOOP_COVERAGE_STORE ?? (await mkdtemp(path.join(tmpdir(), 'reloop-coverage-')));
  store = await openFileStore(dir, { onWarning: () => {} });
});

afterAll(async () => {
  await store?.close();
});

describe('generated path scenarios', () => {
  it('has a scenario for every edge of the chart', () => {
    expect(report.unreached.map(edgeName)).toEqual([]);
    expect(cases.length).toBe(report.edges.length);
  });

  // `%s` prints the whole edge name (`$name` would be cut at 40 characters).
  it.each(cases)('%s', async (_name, edgePath, index) => {
    const scenario = buildScenario(edgePath);
    const run = await runScenario(scenario, { store, idPrefix: `cov-${nonce}-${index}-` });
    const logged = loggedTransitions(run.records, run.result.runId);
    expect(logged).toEqual(scenario.expected.map((e) => e.key));
    expect(logged[scenario.targetIndex]).toBe(edgePath.edge.key);
    expect(run.result.reason).toBe(scenario.finalReason);
    expect(run.problems).toEqual([]);
  });
});
