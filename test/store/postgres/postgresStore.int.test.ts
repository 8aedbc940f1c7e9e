import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConcurrencyError } from '../../../src/store/errors.ts';
import {
  migrate,
  openPostgresStore,
  PG_SCHEMA_VERSION,
  type PostgresEventStore,
  StoreUnavailableError,
} from '../../../src/store/postgres/index.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import { sealRecords } from '../../../src/store/seal.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../../support/postgres.ts';
import { testEventStore } from '../eventStoreContract.ts';
import { testFollow } from '../followContract.ts';
import { collect, StreamBuilder } from '../support/records.ts';

let db: TestDatabase;

describePg('PostgreSQL store', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  testEventStore('PostgresEventStore', async () => {
    await db.truncate();
    return openPostgresStore(db.url);
  });
  testFollow('PostgresEventStore', async () => {
    await db.truncate();
    return openPostgresStore(db.url);
  });

  const stores: PostgresEventStore[] = [];
  const open = async () => {
    const s = await openPostgresStore(db.url);
    stores.push(s);
    return s;
  };
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
  });

  it('reads back the exact JSON text written, whatever jsonb does to keys, NULs and lone surrogates', async () => {
    const store = await open();
    const s = new StreamBuilder('exact');
    // Keys out of jsonb's order (it sorts by length, then bytes) and strings jsonb refuses.
    const odd = 'nul \u0000 and a lone \ud800 surrogate';
    const records = [
      s.created('zebra'),
      s.record('tool.started', {
        toolUseId: 'tu',
        name: 'Bash',
        input: { zz: 1, a: odd, mm: [3, 1] },
        index: 0,
        readOnly: false,
      }),
    ];
    await store.append('exact', records, { expectedSeq: 0 });
    const back = await collect(store.read('exact'));
    // The lines the file store would write for them (sealed), exactly.
    expect(back.map((r) => JSON.stringify(r))).toEqual(sealRecords(undefined, records).lines);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    const row = await c.query(`SELECT data FROM reloop.records WHERE session = 'exact' AND seq = 2`);
    await c.end();
    expect(row.rows[0].data.input.a).toBe('nul \ufffd and a lone \ufffd surrogate');
  });

  it('two stores racing on one session: one ConcurrencyError per round, the log intact', async () => {
    const a = await open();
    const b = await open();
    const s = new StreamBuilder('race');
    await a.append('race', [s.created()], { expectedSeq: 0 });
    for (let round = 0; round < 20; round++) {
      const last = await a.lastSeq('race');
      const one = new StreamBuilder('race', { seq: last });
      const two = new StreamBuilder('race', { seq: last });
      const results = await Promise.allSettled([
        a.append('race', [one.user('a'), one.user('a')], { expectedSeq: last }),
        b.append('race', [two.user('b'), two.user('b'), two.user('b')], { expectedSeq: last }),
      ]);
      const failed = results.filter((r) => r.status === 'rejected');
      expect(failed).toHaveLength(1);
      expect((failed[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    }
    const log = await collect(b.read('race'));
    expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    // Every batch landed whole: runs of 'a' come in twos, runs of 'b' in threes.
    const authors = log
      .slice(1)
      .map((r) => (r.type === 'user.message' ? String(r.data.message.content) : '?'));
    const runs = authors.join('').match(/a+|b+/g) ?? [];
    for (const r of runs) expect(r.length % (r[0] === 'a' ? 2 : 3)).toBe(0);
  });

  it('three processes writing one session: every batch whole and contiguous, conflicts refused', async () => {
    const store = await open();
    const s = new StreamBuilder('procs');
    await store.append('procs', [s.created()], { expectedSeq: 0 });
    const writer = path.join(import.meta.dirname, 'support/pgWriter.ts');
    const children = ['p', 'q', 'r'].map((tag) =>
      spawn(process.execPath, ['--import', 'tsx', writer, db.url, 'procs', tag, '8'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    );
    const reports = await Promise.all(
      children.map(async (c) => {
        let out = '';
        c.stdout!.on('data', (d: Buffer) => {
          out += d.toString();
        });
        const [code] = await once(c, 'exit');
        expect(code).toBe(0);
        return JSON.parse(out) as { tag: string; written: number; conflicts: number };
      }),
    );
    expect(reports.map((r) => r.written)).toEqual([8, 8, 8]);
    const log = await collect(store.read('procs'));
    expect(log).toHaveLength(1 + 3 * 3 * 8);
    expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    const texts = log.slice(1).map((r) => (r.type === 'user.message' ? String(r.data.message.content) : ''));
    for (let i = 0; i < texts.length; i += 3) {
      const [tag, batch] = texts[i]!.split(' ');
      expect(texts.slice(i, i + 3)).toEqual([0, 1, 2].map((k) => `${tag} ${batch} ${k}`));
    }
  });

  it('groups appends of concurrent sessions into shared transactions', async () => {
    const store = await open();
    const sessions = Array.from({ length: 16 }, (_, i) => new StreamBuilder(`group-${i}`));
    const before = store.commits;
    await Promise.all(sessions.map((s) => store.append(s.session, [s.created()], { expectedSeq: 0 })));
    for (let round = 0; round < 5; round++) {
      await Promise.all(
        sessions.map((s) => store.append(s.session, [s.transition()], { expectedSeq: s.seq - 1 })),
      );
    }
    const commits = store.commits - before;
    expect(commits).toBeLessThan(16 * 6);
    for (const s of sessions) expect(await store.lastSeq(s.session)).toBe(6);
  });

  it('follows a session live: records appended later arrive in order, the signal ends it', async () => {
    const store = await open();
    const writer = await open();
    const s = new StreamBuilder('live');
    await writer.append('live', [s.created(), s.user('one')], { expectedSeq: 0 });
    const controller = new AbortController();
    const seen: LogRecord[] = [];
    const following = (async () => {
      for await (const r of store.follow('live', { afterSeq: 1, signal: controller.signal })) {
        seen.push(r);
        if (r.seq === 2) await writer.append('live', [s.transition(), s.transition()], { expectedSeq: 2 });
        if (r.seq === 4) controller.abort();
      }
    })();
    await following;
    expect(seen.map((r) => r.seq)).toEqual([2, 3, 4]);
  });

  it('follows a session that does not exist yet', async () => {
    const store = await open();
    const writer = await open();
    const controller = new AbortController();
    const first = (async () => {
      for await (const r of store.follow('later', { afterSeq: 0, signal: controller.signal })) {
        controller.abort();
        return r;
      }
      return null;
    })();
    const s = new StreamBuilder('later');
    // The follower is subscribed once its LISTEN is in place; appending right away may beat it,
    // and then its first read finds the record instead: either way it must arrive.
    await writer.append('later', [s.created('hello')], { expectedSeq: 0 });
    expect((await first)?.type).toBe('session.created');
  });

  it('migrates once, is idempotent, and refuses a database from a newer reloop', async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      expect(await migrate(c)).toEqual({ from: PG_SCHEMA_VERSION, to: PG_SCHEMA_VERSION });
      await c.query(`UPDATE reloop.meta SET value = '99' WHERE key = 'schema_version'`);
      await expect(openPostgresStore(db.url)).rejects.toMatchObject({ code: 'STORE_SCHEMA' });
      await c.query(`UPDATE reloop.meta SET value = $1 WHERE key = 'schema_version'`, [
        String(PG_SCHEMA_VERSION),
      ]);
    } finally {
      await c.end();
    }
  });

  it('six processes opening a fresh database at once: one migrates, all open it', async () => {
    const fresh = await createTestDatabase();
    try {
      const opener = path.join(import.meta.dirname, 'support/pgOpen.ts');
      const outs = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const c = spawn(process.execPath, ['--import', 'tsx', opener, fresh.url], {
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          c.stdout!.on('data', (d: Buffer) => {
            out += d.toString();
          });
          c.stderr!.on('data', (d: Buffer) => {
            out += d.toString();
          });
          await once(c, 'exit');
          return out.trim();
        }),
      );
      expect(outs).toEqual(Array(6).fill('ok'));
    } finally {
      await fresh.drop();
    }
  });

  it('names the server it cannot reach, password masked', async () => {
    const err = await openPostgresStore('postgres://me:secret@127.0.0.1:1/nowhere').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreUnavailableError);
    expect((err as Error).message).toMatch(/postgres:\/\/me:\*\*\*@127\.0\.0\.1:1\/nowhere/);
    expect((err as Error).message).not.toContain('secret');
  });
});
