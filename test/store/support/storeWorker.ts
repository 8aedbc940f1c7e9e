/**
 * A second process for the file store's cross-process tests:
 *   node --import tsx storeWorker.ts <mode> <dir> <session>
 * Reports one JSON object per line on stdout.
 *   append — try to append two records, report { ok, lastSeq } or { error, code, holder }, close.
 *   hold   — take the writer lock, append three records if new, report { ready }, release on stdin end.
 *   crash  — take the lock, append, report { ready }, then die by SIGKILL (no cleanup runs).
 *   exit   — take the lock, append, then process.exit(0) without closing the store.
 *   run    — take the lock, start a run (created, run.started), report { ready }, wait for stdin to end.
 *   fork   — fork <session> whole (ids fork-s1…); with a 4th argument N, SIGKILL itself after reading
 *            N records of the source (mid-fork); report { forked }, then wait for stdin to end.
 */
import { forkSession } from '../../../src/replay/fork.ts';
import { counterIds } from '../../../src/runtime/determinism.ts';
import { openFileStore } from '../../../src/store/fileStore.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import type { ReadRange } from '../../../src/store/types.ts';
import { StreamBuilder } from './records.ts';

const [mode, dir, session] = process.argv.slice(2);
if (!mode || !dir || !session) throw new Error('usage: storeWorker.ts <mode> <dir> <session>');

function report(msg: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ pid: process.pid, ...msg })}\n`);
}

const store = await openFileStore(dir, { onWarning: (w) => report({ warning: w.code, line: w.line }) });
if (mode === 'fork') await fork(Number(process.argv[5] ?? Number.POSITIVE_INFINITY));
const lastSeq = (await store.exists(session)) ? await store.lastSeq(session) : 0;
const s = new StreamBuilder(session, { seq: lastSeq });
const batch = lastSeq === 0 ? [s.created('from the worker'), s.user('hi')] : [s.transition(), s.transition()];

try {
  if (mode === 'run') {
    const r = new StreamBuilder(session, { seq: lastSeq });
    await store.append(session, [r.created('a run'), r.runStarted()], { expectedSeq: lastSeq });
    report({ ready: true, lastSeq: await store.lastSeq(session) });
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.once('end', resolve));
  } else if (mode === 'append') {
    await store.append(session, batch, { expectedSeq: lastSeq });
    report({ ok: true, lastSeq: await store.lastSeq(session) });
  } else {
    await store.openWriter(session);
    await store.append(session, lastSeq === 0 ? [...batch, s.transition()] : batch, { expectedSeq: lastSeq });
    report({ ready: true, lastSeq: await store.lastSeq(session) });
    if (mode === 'crash') process.kill(process.pid, 'SIGKILL');
    if (mode === 'exit') process.exit(0);
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.once('end', resolve));
  }
} catch (e) {
  const err = e as Error & { code?: string; holder?: string };
  report({ error: err.name, code: err.code, holder: err.holder, message: err.message });
}
await store.close();
report({ closed: true });

async function fork(killAfter: number): Promise<never> {
  let n = 0;
  const killing = Object.assign(Object.create(store) as typeof store, {
    async *read(id: string, range?: ReadRange): AsyncIterable<LogRecord> {
      for await (const r of store.read(id, range)) {
        if (++n > killAfter) process.kill(process.pid, 'SIGKILL');
        yield r;
      }
    },
  });
  report({ forking: true });
  const forked = await forkSession(killing, session!, await store.lastSeq(session!), counterIds('fork-'));
  report({ forked });
  process.stdin.resume();
  await new Promise((resolve) => process.stdin.once('end', resolve));
  await store.close();
  process.exit(0);
}
