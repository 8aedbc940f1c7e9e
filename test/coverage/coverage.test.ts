import { execFile } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { CoverageCounter, edgeName, readLogFile } from '../../src/coverage/coverage.ts';
import { coverageGate } from '../../src/coverage/gate.ts';
import { computeEdgePaths } from '../../src/coverage/paths.ts';
import { runScenario } from '../../src/coverage/runScenario.ts';
import { buildScenario, type Scenario } from '../../src/coverage/scenarios.ts';
import { REASON_DOCS } from '../../src/machines/reasons.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { edgeCatalog } from '../../src/viz/edgeCatalog.ts';
import { CLI_BIN } from '../support/cli.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
/** A CLI call starts node and loads the compiled CLI: seconds on a busy machine. */
const CLI_TIMEOUT = 60_000;

async function reloop(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [CLI_BIN, ...args], { cwd: root });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** The transition records a scenario's run would log, without running it. */
function transitionRecords(s: Scenario, session: string): LogRecord[] {
  return s.expected.map((e, i) => ({
    v: 1,
    seq: i + 1,
    at: 0,
    session,
    run: 'r1',
    type: 'transition',
    data: { from: e.from, to: e.to, trigger: e.event, reason: e.reason ?? '' },
  }));
}

const scenarios = computeEdgePaths().paths.map((p) => buildScenario(p));
let tmp: string;
let logFile: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'reloop-coverage-cli-'));
  // A real log: the scenario that ends `completed`, written as a raw .jsonl file.
  const store = new MemoryEventStore();
  const done = scenarios.find((s) => s.target.reason === 'completed')!;
  const { records } = await runScenario(done, { store, idPrefix: 'cli-' });
  logFile = path.join(tmp, 'completed.jsonl');
  await writeFile(logFile, records.map((r) => `${JSON.stringify(r)}\n`).join(''));
});

describe('coverage of logs', () => {
  it('counts reasons of the vocabulary and catalog edges taken', () => {
    const s = scenarios.find((x) => x.target.reason === 'stop_hook_prevented')!;
    const d = new CoverageCounter().addAll(transitionRecords(s, 's1')).detail();
    expect(Object.keys(d.report)).toEqual(['reasons', 'edges', 'tools']);
    expect(d.report.reasons.covered).toEqual(['stop_hook_prevented', 'query_built', 'finish_requested']);
    expect(d.report.reasons.missing.length).toBe(Object.keys(REASON_DOCS).length - 3);
    expect(d.report.edges).toMatchObject({ covered: 3, total: edgeCatalog().length });
    const refused = scenarios.find((x) => x.target.reason === 'refused')!;
    expect(d.report.edges.missing).toContain(edgeName(refused.target));
    expect(d.unknown).toEqual([]);
  });

  it('lists logged transitions the chart does not have', () => {
    const [r] = transitionRecords(scenarios[0]!, 's1');
    const odd = {
      ...r!,
      data: { from: 'building', to: 'thinking', trigger: 'x', reason: 'query_built' },
    } as LogRecord;
    expect(new CoverageCounter().addAll([odd]).detail().unknown).toEqual([
      'building --[x]--> thinking : query_built',
    ]);
  });

  it('reads raw log files line by line and names the bad line', async () => {
    const lines = (await readFile(logFile, 'utf8')).trimEnd().split('\n');
    const corrupt = path.join(tmp, 'corrupt.jsonl');
    await writeFile(corrupt, [lines[0], lines[1], '{"v":1,"seq":', lines[2]].join('\n'));
    const read = async (f: string) => {
      for await (const _ of readLogFile(f)) void _;
    };
    await expect(read(corrupt)).rejects.toThrow(`invalid record (${corrupt}, line 3)`);
    const wrongVersion = path.join(tmp, 'v99.jsonl');
    await writeFile(wrongVersion, [lines[0], lines[1]!.replace(/"v":\d+/, '"v":99')].join('\n'));
    await expect(read(wrongVersion)).rejects.toThrow(
      `unsupported schema version 99 at ${wrongVersion} line 2`,
    );
  });
});

describe('the coverage gate', () => {
  async function storeWith(list: Scenario[]): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'reloop-gate-'));
    const store = await openFileStore(dir, { onWarning: () => {} });
    for (const [i, s] of list.entries())
      await store.append(`g${i}`, transitionRecords(s, `g${i}`), { expectedSeq: 0 });
    await store.close();
    return dir;
  }

  it('passes when every reason and edge is covered, fails naming what one removed scenario alone covered', async () => {
    expect((await coverageGate(await storeWith(scenarios))).ok).toBe(true);
    // A scenario whose target edge no other scenario takes on its way.
    const alone = scenarios.find((s) =>
      scenarios.every((o) => o === s || !o.expected.some((e) => e.key === s.target.key)),
    )!;
    expect(alone).toBeDefined();
    const gate = await coverageGate(await storeWith(scenarios.filter((s) => s !== alone)));
    expect(gate.ok).toBe(false);
    const text = gate.lines.join('\n');
    expect(text).toContain(edgeName(alone.target));
    if (gate.detail?.report.reasons.missing.length) expect(text).toContain(alone.target.reason!);
  });

  it('fails on a missing or empty store', async () => {
    expect((await coverageGate(path.join(tmp, 'nowhere'))).lines[0]).toMatch(/no store at/);
    expect((await coverageGate(await storeWith([]))).lines[0]).toMatch(/holds no session/);
  });
});

describe('reloop coverage / reloop paths', () => {
  it(
    'prints exactly the JSON report',
    async () => {
      const r = await reloop('coverage', '--json', logFile);
      expect(r.code).toBe(0);
      const json = JSON.parse(r.stdout);
      expect(Object.keys(json)).toEqual(['reasons', 'edges', 'tools']);
      expect(Object.keys(json.reasons)).toEqual(['covered', 'missing']);
      expect(Object.keys(json.edges)).toEqual(['covered', 'total', 'missing']);
      expect(json.reasons.covered).toContain('completed');
      expect(json.edges.total).toBe(edgeCatalog().length);
    },
    CLI_TIMEOUT,
  );

  it(
    'exits 1 below --min, 0 at or above it, 2 on a bad percentage',
    async () => {
      const [below, zero, bad] = await Promise.all([
        reloop('coverage', logFile, '--min', '100'),
        reloop('coverage', logFile, '--min', '0'),
        reloop('coverage', logFile, '--min', 'lots'),
      ]);
      expect(below.code).toBe(1);
      expect(below.stdout).toMatch(/reasons\s+\d+\/\d+/);
      expect(below.stderr).toMatch(/edge coverage .* is below 100%/);
      expect(zero.code).toBe(0);
      expect(bad.code).toBe(2);
    },
    CLI_TIMEOUT,
  );

  it(
    'fails with the file and line of a corrupt log',
    async () => {
      const bad = path.join(tmp, 'bad.jsonl');
      await writeFile(bad, `${(await readFile(logFile, 'utf8')).split('\n')[0]}\nnot json\n`);
      const r = await reloop('coverage', bad);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`${bad}, line 2`);
    },
    CLI_TIMEOUT,
  );

  it(
    'prints a path and a reason for every edge',
    async () => {
      const r = await reloop('paths', '--json');
      expect(r.code).toBe(0);
      const paths = JSON.parse(r.stdout) as { edge: { reason: string }; steps: string[]; reason: string }[];
      expect(paths.length).toBe(edgeCatalog().length);
      expect(paths.find((p) => p.reason === 'query_built')).toEqual({
        edge: {
          from: 'building',
          event: 'xstate.done.actor.buildQuery',
          guard: null,
          reason: 'query_built',
          to: 'requesting',
        },
        steps: ['buildQuery.ok'],
        reason: 'query_built',
      });
      expect(paths.find((p) => p.reason === 'tool_batch_resumed')?.steps).toEqual(['buildQuery.parkedBatch']);
    },
    CLI_TIMEOUT,
  );
});
