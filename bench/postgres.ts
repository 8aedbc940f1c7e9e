/**
 * PostgreSQL store beside the file store, in one run: durable appends/s and tool rounds/s with
 * 1, 4 and 16 sessions writing at once. Targets (DESIGN §12): a PostgreSQL tool round costs at
 * most 2× a file-store one at 1 session, and PostgreSQL rounds/s grow with sessions up to 16
 * (appends of concurrent sessions share transactions: group commit).
 *   node --import tsx bench/postgres.ts
 * The server: $RELOOP_BENCH_PG, else $RELOOP_TEST_PG, else postgres://postgres@127.0.0.1:5432/postgres;
 * the bench creates its own database there and drops it afterwards.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { openFileStore } from '../src/store/fileStore.ts';
import { openPostgresStore, type PostgresEventStore } from '../src/store/postgres/index.ts';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../src/store/records.ts';
import type { EventStore } from '../src/store/types.ts';
import { noop, noopScript } from './noopRounds.ts';

const SESSIONS = [1, 4, 16] as const;
const APPENDS = Number(process.env.BENCH_PG_APPENDS ?? 300);
const ROUNDS = Number(process.env.BENCH_PG_ROUNDS ?? 150);
const REPS = Number(process.env.BENCH_PG_REPS ?? 5);

export interface PgBenchRow {
  store: 'file' | 'postgres';
  sessions: number;
  appendsPerSec: number;
  roundsPerSec: number;
  /** µs of wall time per tool round of one session (sessions / rounds per second). */
  usPerRound: number;
  /** PostgreSQL: appends per transaction (group commit). */
  appendsPerCommit?: number;
}

/** One transition record of about the size of a real one, for raw append throughput. */
function record(session: string, seq: number): LogRecord {
  return {
    v: CURRENT_SCHEMA_VERSION,
    seq,
    at: 1_700_000_000_000 + seq,
    session,
    run: 'run-1',
    type: 'transition',
    data: {
      from: 'dispatchingTools',
      to: 'building',
      trigger: 'xstate.done.actor.runTools',
      reason: 'tool_result_continuation',
    },
  } as LogRecord;
}

/** `n` sessions appending one record per commit, `APPENDS` each, all at once: appends per second. */
async function appendsPerSec(store: EventStore, n: number, tag: string): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const session = `${tag}-a${n}-${i}`;
      for (let seq = 1; seq <= APPENDS; seq++)
        await store.append(session, [record(session, seq)], { expectedSeq: seq - 1 });
    }),
  );
  return (n * APPENDS) / ((performance.now() - t0) / 1000);
}

/** `n` sessions each running ROUNDS no-op tool rounds through the real runtime, all at once. */
async function roundsPerSec(store: EventStore, n: number, tag: string): Promise<number> {
  const sessions = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      Session.create({
        store,
        model: new ScriptedModelClient(noopScript(ROUNDS)),
        tools: [noop],
        clock: new VirtualClock(),
        random: seededRandom(i),
        ids: counterIds(`${tag}-r${n}-${i}-`),
        settings: { maxTurns: ROUNDS + 1, contextWindow: 10_000_000 },
      }),
    ),
  );
  const t0 = performance.now();
  const results = await Promise.all(sessions.map((s) => s.submit('go')));
  const seconds = (performance.now() - t0) / 1000;
  for (const r of results) if (r.status !== 'completed') throw new Error(`bench run ended ${r.reason}`);
  return (n * ROUNDS) / seconds;
}

async function measure(
  store: EventStore,
  kind: PgBenchRow['store'],
  n: number,
  rep: number,
): Promise<PgBenchRow> {
  const pgStore = kind === 'postgres' ? (store as PostgresEventStore) : undefined;
  const commits0 = pgStore?.commits ?? 0;
  const appends = await appendsPerSec(store, n, `${kind}${rep}`);
  const commits = (pgStore?.commits ?? 0) - commits0;
  const rounds = await roundsPerSec(store, n, `${kind}${rep}`);
  return {
    store: kind,
    sessions: n,
    appendsPerSec: appends,
    roundsPerSec: rounds,
    usPerRound: (n / rounds) * 1e6,
    ...(pgStore ? { appendsPerCommit: (n * APPENDS) / commits } : {}),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Each measure's median over the repetitions. */
function medianRow(reps: PgBenchRow[]): PgBenchRow {
  const first = reps[0]!;
  const per = reps.map((r) => r.appendsPerCommit).filter((x): x is number => x !== undefined);
  return {
    store: first.store,
    sessions: first.sessions,
    appendsPerSec: median(reps.map((r) => r.appendsPerSec)),
    roundsPerSec: median(reps.map((r) => r.roundsPerSec)),
    usPerRound: median(reps.map((r) => r.usPerRound)),
    ...(per.length ? { appendsPerCommit: median(per) } : {}),
  };
}

const fmt = (x: number, d = 0) =>
  x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

export async function benchPostgres(log: (line: string) => void = console.log): Promise<PgBenchRow[] | null> {
  const server =
    process.env.RELOOP_BENCH_PG ||
    process.env.RELOOP_TEST_PG ||
    'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: server, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (e) {
    log(`postgres bench — SKIPPED: no server at ${server} (${(e as Error).message})`);
    return null;
  }
  const name = `reloop_bench_${randomBytes(4).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(server);
  u.pathname = `/${name}`;
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-pg-'));
  const file = await openFileStore(dir, { onWarning: () => undefined });
  const postgres = await openPostgresStore(u.toString(), { maxConnections: 20 });
  const rows: PgBenchRow[] = [];
  try {
    log(
      `postgres bench — ${ROUNDS} tool rounds and ${APPENDS} one-record appends per session; file store in ${dir}, PostgreSQL ${server.replace(/\/[^/]*$/, `/${name}`)}`,
    );
    // Interleaved (file, postgres, file, …), REPS times each, medians kept: the machine's drift
    // hits both alike, and one busy second does not decide a row.
    for (const n of SESSIONS) {
      const samples: Record<PgBenchRow['store'], PgBenchRow[]> = { file: [], postgres: [] };
      for (let rep = 0; rep < REPS; rep++) {
        samples.file.push(await measure(file, 'file', n, rep));
        samples.postgres.push(await measure(postgres, 'postgres', n, rep));
      }
      rows.push(medianRow(samples.file), medianRow(samples.postgres));
    }
    log(
      '| store | sessions | durable appends/s | tool rounds/s | µs per round per session | appends per transaction |',
    );
    log('|---|---|---|---|---|---|');
    for (const r of rows) {
      log(
        `| ${r.store} | ${r.sessions} | ${fmt(r.appendsPerSec)} | ${fmt(r.roundsPerSec)} | ${fmt(r.usPerRound)} | ${r.appendsPerCommit !== undefined ? fmt(r.appendsPerCommit, 2) : '—'} |`,
      );
    }
    const at = (kind: PgBenchRow['store'], n: number) =>
      rows.find((r) => r.store === kind && r.sessions === n)!;
    const ratio = at('postgres', 1).usPerRound / at('file', 1).usPerRound;
    log(
      `PostgreSQL / file per-round cost at 1 session: ${fmt(ratio, 2)}× (target ≤ 2: ${ratio <= 2 ? 'met' : 'NOT met'})`,
    );
    const growth = SESSIONS.map((n) => at('postgres', n).roundsPerSec);
    const grows = growth.every((v, i) => i === 0 || v > growth[i - 1]!);
    log(
      `PostgreSQL rounds/s at 1 → 4 → 16 sessions: ${growth.map((v) => fmt(v)).join(' → ')} (target: growing: ${grows ? 'met' : 'NOT met'})`,
    );
    return rows;
  } finally {
    await postgres.close();
    await file.close();
    await rm(dir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await benchPostgres();
