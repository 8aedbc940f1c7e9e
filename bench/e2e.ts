/**
 * End-to-end cost of a round: a 600-round session through `reloop run` (the compiled CLI, file
 * store, the real SDK) against the same loopback Messages API as a plain hand-written durable
 * loop on the same SDK (bench/e2ePlain.ts): same tools and system prompt, the same Read call
 * each round, one JSON line + fdatasync per round. Each client runs in its own process; the
 * server (this process) notes when each request arrives, so process start-up is not counted.
 * Target (docs/BENCHMARKS.md §5): reloop ≤ 1.2× the plain loop, flat over the session.
 *   npm run build && npm run bench:build && node node_modules/.cache/reloop-bench/bench/e2e.js [rounds]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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
  /** CPU time of the client process (user + system, start-up included) per round. */
  cpuMsPerRound: number;
  /** The median round, over the whole session: the typical round, spikes of the host aside. */
  medianMs: number;
  /** The median round over rounds 50–150 and over the last 100. */
  earlyMs: number;
  lateMs: number;
}

/** Runs a client under the CPU-time preload; resolves with its CPU ms (user + system). */
function exec(cmd: string, args: string[], cwd: string, env: Record<string, string>): Promise<number> {
  args = ['--import', pathToFileURL(path.join(HERE, 'cpuAtExit.js')).href, ...args];
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
    child.on('close', (code) => {
      const cpu = /cpu-ms (\S+) (\S+)/.exec(err);
      if (code === 0 && cpu) resolve(Number(cpu[1]) + Number(cpu[2]));
      else reject(new Error(`${args.join(' ')} exited ${code}: ${out}${err}`));
    });
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
  let cpuMs = 0;
  try {
    if (which === 'reloop') {
      cpuMs = await exec(
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
      cpuMs = await exec(
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
  const gaps = arrivals.slice(1).map((t, i) => t - arrivals[i]!);
  const medianOfGaps = (from: number, to: number) => median(gaps.slice(from, to));
  return {
    msPerRound: (arrivals[rounds]! - arrivals[0]!) / rounds,
    cpuMsPerRound: cpuMs / rounds,
    medianMs: medianOfGaps(0, rounds),
    earlyMs: medianOfGaps(Math.min(50, rounds - 1), Math.min(150, rounds)),
    lateMs: medianOfGaps(Math.max(0, rounds - 100), rounds),
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

export async function benchE2e(
  rounds = Number(process.env.BENCH_E2E_ROUNDS ?? 600),
  reps = Number(process.env.BENCH_E2E_REPS ?? 5),
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
    const cpu = (rs: E2eRun[]) => median(rs.map((x) => x.cpuMsPerRound));
    const typical = (rs: E2eRun[]) => median(rs.map((x) => x.medianMs));
    console.log(
      '| loop | ms/round, mean (median run) | all runs | median round (median of runs) | early (rounds 50–150, median) | late (last 100, median) | late/early | client CPU ms/round |',
    );
    console.log('|---|---|---|---|---|---|---|---|');
    const row = (name: string, r: E2eRun, all: E2eRun[]) =>
      console.log(
        `| ${name} | ${r.msPerRound.toFixed(2)} | ${all.map((x) => x.msPerRound.toFixed(2)).join(', ')} | ${typical(all).toFixed(2)} | ${r.earlyMs.toFixed(2)} | ${r.lateMs.toFixed(2)} | ${(r.lateMs / r.earlyMs).toFixed(2)} | ${cpu(all).toFixed(2)} |`,
      );
    row('plain durable loop (SDK + 1 line + fdatasync a round)', plain, runs.plain);
    row('reloop run (file store)', reloop, runs.reloop);
    console.log(
      `\nratio reloop / plain (target ≤ 1.2×): mean round ${(reloop.msPerRound / plain.msPerRound).toFixed(2)}×, ` +
        `median round ${(typical(runs.reloop) / typical(runs.plain)).toFixed(2)}×, client CPU ${(cpu(runs.reloop) / cpu(runs.plain)).toFixed(2)}×`,
    );
    return { plain, reloop };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await benchE2e(Number(process.argv[2] ?? 600));
}
