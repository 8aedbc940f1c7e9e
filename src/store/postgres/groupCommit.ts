import type pg from 'pg';
import type { SessionInfo } from '../types.ts';

/** One append waiting for its group: validated records, their JSON text, the catalog row after them. */
export interface PendingAppend {
  session: string;
  expectedSeq: number;
  records: { type: string; run: string | null; at: number; text: string; data?: unknown }[];
  row: SessionInfo;
  /** The seal of the last record after this append (null: a v1 record, no seal). */
  head: string | null;
  /** false: the transaction need not wait for the WAL flush (see AppendOptions.durable). */
  durable: boolean;
  /** Resolves with -1 when written, else with the session's actual last seq. */
  settle(result: number | Error): void;
}

/** Most appends one transaction takes: bounds its size (and how long the others wait). */
const MAX_GROUP = 256;

/**
 * Group commit across sessions. While one transaction is in flight, every append that arrives
 * waits; the next transaction takes them all, whatever their sessions: one `reloop.append_group`
 * call, one round trip, one WAL flush. A lone writer pays one commit per append; sixteen
 * sessions share their commits instead of queueing for sixteen.
 */
export class GroupCommitter {
  private queue: PendingAppend[] = [];
  private draining: Promise<void> | null = null;
  /** Transactions committed so far (tests and benchmarks check the grouping). */
  commits = 0;

  constructor(private readonly pool: pg.Pool) {}

  submit(append: PendingAppend): void {
    this.queue.push(append);
    this.draining ??= this.drain();
  }

  /** Settles when every append submitted so far has been committed or refused. */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    // `draining` is cleared in the same synchronous step that sees the queue empty, so an append
    // submitted at any later moment starts a new drain.
    for (;;) {
      if (this.queue.length === 0) {
        this.draining = null;
        return;
      }
      const group = this.queue.splice(0, MAX_GROUP);
      try {
        await this.commit(group);
      } catch (e) {
        // A whole group failed (a key collision from a writer that bypassed the catalog lock, a
        // lost connection): each append is tried alone, so one bad append fails only itself.
        if (group.length === 1) group[0]!.settle(e as Error);
        else
          for (const a of group) {
            await this.commit([a]).catch((err: unknown) => a.settle(err as Error));
          }
      }
    }
  }

  private async commit(group: PendingAppend[]): Promise<void> {
    // Session order (stable, so one session's appends keep theirs): every group locks catalog
    // rows in the same order, and two groups never deadlock.
    const ordered = group
      .map((a, i) => ({ a, i }))
      .sort((x, y) => (x.a.session < y.a.session ? -1 : x.a.session > y.a.session ? 1 : x.i - y.i))
      .map((x) => x.a);
    const payload = JSON.stringify(
      ordered.map((a) => ({
        session: a.session,
        expectedSeq: a.expectedSeq,
        records: a.records,
        row: {
          title: a.row.title,
          created: a.row.created,
          updated: a.row.updated,
          status: a.row.status,
          forkedFrom: a.row.forkedFrom,
          parent: a.row.parent,
          head: a.head,
        },
      })),
    );
    // Named: each connection parses and plans the call once, not once per commit.
    const res = await this.pool.query<{ r: number[] }>({
      name: 'reloop_append_group',
      text: 'SELECT reloop.append_group($1::json, $2) AS r',
      // A group waits for the disk when any of its appends must.
      values: [payload, group.some((a) => a.durable)],
    });
    this.commits++;
    const results = res.rows[0]?.r ?? [];
    for (const [i, a] of ordered.entries()) {
      a.settle(results[i] ?? new Error('append_group returned too few results'));
    }
  }
}
