import { type ChildProcess, spawn } from 'node:child_process';
import { appendFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { historyProblems } from '../../src/model/history.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { loadRecords } from '../../src/replay/loadSession.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { Session } from '../../src/runtime/session.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import { crashScript, lookTool, noteTool } from './support/crashScript.ts';

const child = path.join(import.meta.dirname, 'support/crashChild.ts');
const dirs: string[] = [];
const tally = { killed: 0, midRun: 0, tornTails: 0 };
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
  console.log(
    `crash test: ${tally.killed} kills, ${tally.midRun} mid-run, ${tally.tornTails} torn tails cut`,
  );
  // Most kill points must land inside a run, or the test would not be testing resume at all.
  expect(tally.midRun).toBeGreaterThanOrEqual(KILL_POINTS.length / 2);
});

interface Killed {
  dir: string;
  session: string;
  acked: number;
  finished: boolean;
}

/** Runs the child and SIGKILLs it when `when` says so (after the n-th ack, or after a delay). */
type When = ({ afterAcks: number } | { afterMs: number }) & { tear?: boolean };

async function runAndKill(when: When): Promise<Killed> {
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-crash-'));
  dirs.push(dir);
  const proc: ChildProcess = spawn(process.execPath, ['--import', 'tsx', child, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let session = '';
  let acked = 0;
  let acks = 0;
  let finished = false;
  let buf = '';
  const kill = () => proc.kill('SIGKILL');
  await new Promise<void>((resolve) => {
    proc.stdout!.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      let nl = buf.indexOf('\n');
      while (nl >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        nl = buf.indexOf('\n');
        if (line.startsWith('session ')) {
          session = line.slice(8);
          if ('afterMs' in when) setTimeout(kill, when.afterMs);
        } else if (line.startsWith('ack ')) {
          acked = Math.max(acked, Number(line.slice(4)));
          if (session) acks++;
          // Kill right as the next batch may be being written: "mid-append" for many of these.
          if ('afterAcks' in when && acks === when.afterAcks) kill();
        } else if (line.startsWith('done')) finished = true;
      }
    });
    proc.on('exit', () => resolve());
  });
  return { dir, session, acked, finished };
}

const KILL_POINTS: When[] = [
  // A kill in the middle of a write leaves part of a line on disk: simulate what the OS kept.
  { afterAcks: 6, tear: true },
  { afterAcks: 19, tear: true },
  ...[1, 2, 3, 4, 5, 7, 9, 12, 15, 18, 22, 27, 33, 40].map((n) => ({ afterAcks: n })),
  ...[5, 15, 30, 45, 60, 80, 110, 150].map((ms) => ({ afterMs: ms })),
];

describe('crash safety (SIGKILL at many points)', () => {
  it.each(KILL_POINTS)('recovers after a kill at %o', async (when) => {
    const k = await runAndKill(when);
    expect(k.session).not.toBe('');
    if (when.tear) {
      await appendFile(path.join(k.dir, 'sessions', `${k.session}.jsonl`), '{"v":1,"seq":99999,"at":1,"sess');
    }
    const warnings: unknown[] = [];
    const store = await openFileStore(k.dir, { onWarning: (w) => warnings.push(w) });
    if (when.tear) await store.openWriter(k.session);
    try {
      // The log opens and validates (a torn last line is cut and reported, never an error).
      const records = await loadRecords(store, k.session);
      // Nothing acknowledged is lost.
      expect(records.length).toBeGreaterThanOrEqual(k.acked);
      records.forEach((r, i) => {
        expect(r.seq).toBe(i + 1);
      });
      // What is there replays identically.
      const verified = await verifyReplay(records);
      expect(verified.divergence).toBeNull();

      // The session resumes to completion: the model is re-asked only what was not answered.
      const answered = records.filter(
        (r) => r.type === 'model.responded' || r.type === 'model.failed',
      ).length;
      const script = crashScript();
      const session = await Session.open(k.session, {
        store,
        model: new ScriptedModelClient({ turns: script.turns.slice(answered) }),
        tools: [lookTool, noteTool],
        settings: { maxTurns: 1000 },
      });
      const interrupted = session.state.currentRun !== null;
      tally.killed++;
      if (interrupted) tally.midRun++;
      tally.tornTails += warnings.length;
      if (when.tear) expect(warnings.length).toBeGreaterThan(0);
      // Killed mid-run: continue it. Killed before the run started: start it. Killed after it
      // ended: nothing to continue.
      if (interrupted) expect((await session.submit(null)).status).toBe('completed');
      else if (session.state.runs.length === 0)
        expect((await session.submit('run every round')).status).toBe('completed');
      else expect(session.state.runs.last()?.status).toBe('completed');
      expect(historyProblems(session.state.messages.view())).toEqual([]);
      const all = await loadRecords(store, k.session);
      expect((await verifyReplay(all)).divergence).toBeNull();
      if (interrupted) {
        const closed = all.find((r) => r.type === 'run.ended' && r.data.reason === 'interrupted');
        expect(closed?.type === 'run.ended' && closed.data.interrupted).toBeTruthy();
      }
    } finally {
      await store.close();
    }
  });
});
