/**
 * End-to-end cost of a round: a 600-round session through `reloop run` (the compiled CLI, file
 * store, the real SDK) against the same loopback Messages API as a plain hand-written durable
 * loop on the same SDK (bench/e2ePlain.ts): same tools and system prompt, the same Read call
 * each round, one JSON line + fdatasync per round. Each client runs in its own process; the
 * server (this process) notes when each request arrives, so process start-up is not counted.
 * Target (docs/BENCHMARKS.md §5): reloop ≤ 1.2× the plain loop, flat over the session.
 *   node node_modules/.cache/reloop-bench/bench/e2e.js [rounds]      (after npm run bench once)
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startMessagesServer, textReply, toolUseReply } from '../test/support/messagesServer.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
/** The repository root: this file runs compiled, under node_modules/.cache/reloop-bench/bench. */
const ROOT = (() => {
  const cache = HERE.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return cache >= 0 ? HERE.slice(0, cache) : path.resolve(HERE, '..');
})();
const PROMPT = 'Read notes.txt again and again until told otherwise.';

interface E2eRun {
  /** Mean ms per round over the whole session (first request to last). */
  msPerRound: number;
  /** Mean ms per round over rounds 50–150 and over the last 100. */
  earlyMs: number;
  lateMs: number;
}

function exec(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
}

async function oneSession(which: 'reloop' | 'plain', rounds: number, dir: string): Promise<E2eRun> {
  const arrivals: number[] = [];
  const server = await startMessagesServer({
    fallback: () => {
      arrivals.push(performance.now());
      const n = arrivals.length;
      return n <= rounds
        ? toolUseReply('Read', { file_path: 'notes.txt' }, { toolUseId: `toolu_${n}` })
        : textReply('Done.');
    },
  });
  const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-bench' };
  const work = await mkdtemp(path.join(dir, `${which}-`));
  await writeFile(path.join(work, 'notes.txt'), 'remember the milk\nand the eggs\n');
  try {
    if (which === 'reloop') {
      await exec(
        process.execPath,
        [
          path.join(ROOT, 'bin', 'reloop.js'),
          'run',
          '--model',
          'claude-sonnet-4-6',
          '--max-turns',
          String(rounds + 1),
          '--store',
          path.join(work, 'store'),
          '--json',
          PROMPT,
        ],
        work,
        env,
      );
    } else {
      await exec(
        process.execPath,
        [path.join(HERE, 'e2ePlain.js'), path.join(work, 'log.jsonl'), work, PROMPT],
        work,
        env,
      );
    }
  } finally {
    await server.close();
  }
  if (arrivals.length !== rounds + 1)
    throw new Error(`${which}: ${arrivals.length} requests, expected ${rounds + 1}`);
  const per = (from: number, to: number) => (arrivals[to]! - arrivals[from]!) / (to - from);
  return {
    msPerRound: per(0, rounds),
    earlyMs: per(Math.min(50, rounds - 1), Math.min(150, rounds)),
    lateMs: per(Math.max(0, rounds - 100), rounds),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

export async function benchE2e(
  rounds = Number(process.env.BENCH_E2E_ROUNDS ?? 600),
  reps = Number(process.env.BENCH_E2E_REPS ?? 3),
): Promise<{ plain: E2eRun; reloop: E2eRun }> {
  console.log(
    `\n## End to end: a ${rounds}-round session, reloop run (file store) vs a plain durable loop, same SDK and loopback server`,
  );
  const dir = await mkdtemp(path.join(tmpdir(), 'reloop-bench-e2e-'));
  try {
    const runs: Record<'plain' | 'reloop', E2eRun[]> = { plain: [], reloop: [] };
    // Alternated, so a slow spell of the host falls on both.
    for (let i = 0; i < reps; i++) {
      for (const which of ['plain', 'reloop'] as const)
        runs[which].push(await oneSession(which, rounds, dir));
    }
    const pick = (rs: E2eRun[]) => rs.find((r) => r.msPerRound === median(rs.map((x) => x.msPerRound)))!;
    const plain = pick(runs.plain);
    const reloop = pick(runs.reloop);
    console.log(
      '| loop | ms/round (median run) | all runs | early (rounds 50–150) | late (last 100) | late/early |',
    );
    console.log('|---|---|---|---|---|---|');
    const row = (name: string, r: E2eRun, all: E2eRun[]) =>
      console.log(
        `| ${name} | ${r.msPerRound.toFixed(2)} | ${all.map((x) => x.msPerRound.toFixed(2)).join(', ')} | ${r.earlyMs.toFixed(2)} | ${r.lateMs.toFixed(2)} | ${(r.lateMs / r.earlyMs).toFixed(2)} |`,
      );
    row('plain durable loop (SDK + 1 line + fdatasync a round)', plain, runs.plain);
    row('reloop run (file store)', reloop, runs.reloop);
    console.log(
      `\nratio reloop / plain: ${(reloop.msPerRound / plain.msPerRound).toFixed(2)}× (target ≤ 1.2×)`,
    );
    return { plain, reloop };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchE2e(Number(process.argv[2] ?? 600));
}
