import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { REASON_DOCS } from '../machines/reasons.ts';
import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { parseRecordLine } from '../store/validate.ts';
import { type ChartEdge, edgeCatalog, transitionKey } from '../viz/edgeCatalog.ts';
import { ToolOutcomeCounter, type ToolOutcomeCounts } from './toolOutcomes.ts';

/**
 * What a set of logs covers of the chart: the reasons of the vocabulary (REASON_DOCS) its
 * transitions carried, the catalog edges they took, and what became of each tool's calls
 * (toolOutcomes.ts). Logs are the evidence: a reason counts only when a `transition` record
 * carries it.
 */

/** The `--json` shape of `reloop coverage`, exactly. */
export interface CoverageReport {
  reasons: { covered: string[]; missing: string[] };
  edges: { covered: number; total: number; missing: string[] };
  /** Per tool name (sorted), its calls per outcome; every outcome is present. */
  tools: Record<string, ToolOutcomeCounts>;
}

export interface CoverageDetail {
  report: CoverageReport;
  sessions: number;
  transitions: number;
  /** Logged transitions that match no catalog edge (a log from another version of the chart). */
  unknown: string[];
}

/** How a missing edge is named in reports: its catalog id and its reason. */
export function edgeName(e: ChartEdge): string {
  return `${e.id} (${e.reason ?? 'no reason'})`;
}

/** Accumulates records, one session or file after another. */
export class CoverageCounter {
  private readonly reasons = new Set<string>();
  private readonly keys = new Set<string>();
  private readonly sessions = new Set<string>();
  private readonly tools = new ToolOutcomeCounter();
  private transitions = 0;

  constructor(private readonly catalog: readonly ChartEdge[] = edgeCatalog()) {}

  add(record: LogRecord): void {
    this.sessions.add(record.session);
    if (record.type !== 'transition') {
      this.tools.add(record);
      return;
    }
    this.transitions++;
    this.reasons.add(record.data.reason);
    this.keys.add(transitionKey(record.data));
  }

  addAll(records: Iterable<LogRecord>): this {
    for (const r of records) this.add(r);
    return this;
  }

  detail(): CoverageDetail {
    const vocabulary = Object.keys(REASON_DOCS);
    const catalogKeys = new Set(this.catalog.map((e) => e.key));
    const missingEdges = this.catalog.filter((e) => !this.keys.has(e.key));
    return {
      report: {
        reasons: {
          covered: vocabulary.filter((r) => this.reasons.has(r)),
          missing: vocabulary.filter((r) => !this.reasons.has(r)),
        },
        edges: {
          covered: this.catalog.length - missingEdges.length,
          total: this.catalog.length,
          missing: missingEdges.map(edgeName),
        },
        tools: this.tools.report(),
      },
      sessions: this.sessions.size,
      transitions: this.transitions,
      unknown: [...this.keys].filter((k) => !catalogKeys.has(k)).sort(),
    };
  }
}

export function percent(covered: number, total: number): number {
  return total === 0 ? 100 : (covered / total) * 100;
}

export function reasonPercent(r: CoverageReport): number {
  return percent(r.reasons.covered.length, r.reasons.covered.length + r.reasons.missing.length);
}

export function edgePercent(r: CoverageReport): number {
  return percent(r.edges.covered, r.edges.total);
}

/** Why a report is below `min` percent, one line per measure; empty when it is not. */
export function belowMinimum(r: CoverageReport, min: number): string[] {
  const out: string[] = [];
  const rp = reasonPercent(r);
  const ep = edgePercent(r);
  if (rp < min)
    out.push(`reason coverage ${rp.toFixed(1)}% is below ${min}%: missing ${r.reasons.missing.join(', ')}`);
  if (ep < min)
    out.push(`edge coverage ${ep.toFixed(1)}% is below ${min}%: missing ${r.edges.missing.join('; ')}`);
  return out;
}

/**
 * The records of a raw .jsonl log, validated line by line: the first bad line (not JSON,
 * wrong schema version, wrong shape) throws a typed error naming the file and the line.
 */
export async function* readLogFile(file: string): AsyncGenerator<LogRecord> {
  const lines = createInterface({
    input: createReadStream(file, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let line = 0;
  for await (const text of lines) {
    line++;
    yield parseRecordLine(text, { file, line });
  }
}

/**
 * The records of the given log files and of the sub-agents they started, whose logs sit beside
 * them (`<child>.jsonl`, as in a store's sessions folder), each file read once.
 */
export async function* readLogTree(files: readonly string[]): AsyncGenerator<LogRecord> {
  const queue = files.map((f) => path.resolve(f));
  const seen = new Set(queue);
  while (queue.length > 0) {
    const file = queue.shift()!;
    for await (const r of readLogFile(file)) {
      if (r.type === 'child.started') {
        const child = path.join(path.dirname(file), `${r.data.child}.jsonl`);
        if (!seen.has(child) && existsSync(child)) {
          seen.add(child);
          queue.push(child);
        }
      }
      yield r;
    }
  }
}

/** Every record of every session of a store. */
export async function* readStoreRecords(store: EventStore): AsyncGenerator<LogRecord> {
  for (const s of await store.list()) yield* store.read(s.id);
}

export async function countAll(
  sources: AsyncIterable<LogRecord>[],
  catalog?: readonly ChartEdge[],
): Promise<CoverageDetail> {
  const counter = new CoverageCounter(catalog);
  for (const source of sources) for await (const r of source) counter.add(r);
  return counter.detail();
}

/** The human report: two summary rows, then the reason table and the missing edges. */
export function formatCoverage(d: CoverageDetail): string[] {
  const r = d.report;
  const nReasons = r.reasons.covered.length + r.reasons.missing.length;
  const row = (what: string, n: number, total: number) =>
    `${what.padEnd(8)} ${`${n}/${total}`.padStart(7)}  ${percent(n, total).toFixed(1).padStart(5)}%`;
  const lines = [
    `${d.sessions} session(s), ${d.transitions} transition(s)`,
    '',
    row('reasons', r.reasons.covered.length, nReasons),
    row('edges', r.edges.covered, r.edges.total),
    '',
    `${'reason'.padEnd(26)} covered`,
  ];
  const covered = new Set(r.reasons.covered);
  for (const reason of Object.keys(REASON_DOCS)) {
    lines.push(`${reason.padEnd(26)} ${covered.has(reason) ? 'yes' : 'NO'}`);
  }
  if (r.edges.missing.length > 0) {
    lines.push('', 'missing edges:');
    for (const e of r.edges.missing) lines.push(`  ${e}`);
  }
  if (d.unknown.length > 0) {
    lines.push('', 'logged transitions not in the chart (another version of it?):');
    for (const k of d.unknown) lines.push(`  ${k}`);
  }
  return lines;
}
