import { existsSync } from 'node:fs';
import { openFileStore } from '../store/fileStore.ts';
import { belowMinimum, type CoverageDetail, countAll, formatCoverage, readStoreRecords } from './coverage.ts';

export interface GateResult {
  ok: boolean;
  detail: CoverageDetail | null;
  lines: string[];
}

/**
 * The suite's coverage gate: the scenario logs the generated-path tests wrote must cover
 * every reason and every edge (or `min` percent of them). Same logic as
 * `reloop coverage --store <dir> --min <min>`; a failure names what is missing.
 */
export async function coverageGate(dir: string, min = 100): Promise<GateResult> {
  if (!existsSync(dir)) {
    return {
      ok: false,
      detail: null,
      lines: [`coverage gate: no store at ${dir} (did the coverage tests run?)`],
    };
  }
  const store = await openFileStore(dir, { onWarning: () => {} });
  try {
    const detail = await countAll([readStoreRecords(store)]);
    if (detail.sessions === 0) {
      return { ok: false, detail, lines: [`coverage gate: the store at ${dir} holds no session`] };
    }
    const below = belowMinimum(detail.report, min);
    const r = detail.report;
    const summary =
      `coverage gate: ${r.reasons.covered.length}/${r.reasons.covered.length + r.reasons.missing.length} reasons, ` +
      `${r.edges.covered}/${r.edges.total} edges, from ${detail.sessions} session(s) in ${dir}`;
    if (below.length === 0) return { ok: true, detail, lines: [summary] };
    return { ok: false, detail, lines: [summary, ...below, '', ...formatCoverage(detail)] };
  } finally {
    await store.close();
  }
}
