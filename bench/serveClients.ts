/**
 * `reloop serve` against clients that stop reading (issue 18, item 8): the server's RSS with N
 * Server-Sent-Events clients that never read, with M page requests of a large session, and the
 * time from SIGTERM to exit with the stalled clients still connected. Runs the CLI it is given
 * (default: this checkout's bin/reloop.js), so the same script measures an older checkout too.
 *   npx tsx bench/serveClients.ts [path/to/bin/reloop.js]
 *   (BENCH_SERVE_MB=20 the session's transcript size, BENCH_SERVE_CLIENTS=90, BENCH_SERVE_PAGES=20)
 */
import { execFile, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { writeProjectsFolder } from './support/claudeCodeFolder.ts';

const run = promisify(execFile);
const MB = 1024 * 1024;
const CLI = process.argv[2] ?? fileURLToPath(new URL('../bin/reloop.js', import.meta.url));
const SESSION_MB = Number(process.env.BENCH_SERVE_MB ?? 20);
const CLIENTS = Number(process.env.BENCH_SERVE_CLIENTS ?? 90);
const PAGES = Number(process.env.BENCH_SERVE_PAGES ?? 20);
const WAIT_MS = Number(process.env.BENCH_SERVE_WAIT_MS ?? 10_000);
const STOP_LIMIT_MS = 30_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

/** A raw HTTP/1.1 request whose answer is never read (the socket is paused at once). */
function stalled(port: number, target: string, token: string | null): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.pause();
      socket.write(
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}\r\n`,
      );
      resolve(socket);
    });
    socket.on('error', reject);
  });
}

/** A whole request, read to its end: what a browser's fetch (even no-cors) does. */
async function fetchAll(url: string, token: string | null): Promise<number> {
  const res = await fetch(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});
  const bytes = (await res.arrayBuffer()).byteLength;
  if (res.status !== 200) throw new Error(`${res.status}`);
  return bytes;
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'reloop-bench-serve-'));
  try {
    const folder = path.join(root, 'projects');
    await writeProjectsFolder(folder, { totalBytes: SESSION_MB * MB, largestBytes: SESSION_MB * MB });
    const store = path.join(root, 'store');
    await run(process.execPath, [CLI, 'import', folder, '--store', store], { maxBuffer: 64 * MB }).catch(
      (e: { code?: number }) => {
        if (e.code !== 1) throw e; // lines not mapped: exit 1 before issue 18
      },
    );
    const { stdout } = await run(process.execPath, [CLI, 'sessions', '--store', store, '--json']);
    const rows = JSON.parse(stdout) as { id: string; lastSeq: number }[];
    const big = rows.reduce((a, b) => (b.lastSeq > a.lastSeq ? b : a));

    const serve = spawn(process.execPath, [CLI, 'serve', '--store', store, '--port', '0', '--json'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const first = await new Promise<string>((resolve) =>
      createInterface({ input: serve.stdout! }).once('line', resolve),
    );
    const url = new URL((JSON.parse(first) as { url: string }).url);
    const token = url.searchParams.get('token');
    const port = Number(url.port);
    const pid = serve.pid!;
    await sleep(500);
    const idle = rssMb(pid);

    const events = `/api/sessions/${big.id}/events?after=0`;
    const sockets: Socket[] = [];
    let peakSse = idle;
    for (let i = 0; i < CLIENTS; i++) {
      sockets.push(await stalled(port, events, token));
      if (i % 10 === 9) {
        await sleep(300);
        peakSse = Math.max(peakSse, rssMb(pid));
      }
    }
    await sleep(3_000);
    const afterSse = rssMb(pid);
    peakSse = Math.max(peakSse, afterSse);
    // Past the server's patience with clients that stopped reading (10 s since issue 18).
    await sleep(WAIT_MS);
    const afterWait = rssMb(pid);
    const ended = new Set<Socket>();
    const statuses = new Map<string, number>();
    for (const s of sockets) {
      let head = '';
      s.on('data', (d: Buffer) => {
        if (head.length < 16) {
          head += d.toString('latin1');
          if (head.length >= 12) statuses.set(head.slice(9, 12), (statuses.get(head.slice(9, 12)) ?? 0) + 1);
        }
      });
      s.on('end', () => ended.add(s)).on('close', () => ended.add(s));
      s.resume();
    }
    await sleep(1_500);
    const closedByServer = ended.size;
    const answered = [...statuses].map(([code, n]) => `${n}× ${code}`).join(', ');

    let pageBytes = 0;
    const pages = await Promise.allSettled(
      Array.from({ length: PAGES }, () => fetchAll(`http://127.0.0.1:${port}/sessions/${big.id}`, token)),
    );
    for (const p of pages) if (p.status === 'fulfilled') pageBytes = p.value;
    const refused = pages.filter((p) => p.status === 'rejected').length;
    // Stalled again, for the SIGTERM: one per the server's stream limit is plenty.
    for (let i = 0; i < 10; i++) sockets.push(await stalled(port, events, token));
    await sleep(1_000);
    await sleep(1_000);
    const afterPages = rssMb(pid);

    const exited = new Promise<void>((resolve) => serve.once('exit', () => resolve()));
    const t0 = performance.now();
    serve.kill('SIGTERM');
    // A server that does not stop is killed after STOP_LIMIT_MS and reported so.
    const stopped = await Promise.race([exited.then(() => true), sleep(STOP_LIMIT_MS).then(() => false)]);
    if (!stopped) {
      serve.kill('SIGKILL');
      await exited;
    }
    const stopMs = stopped
      ? `${Math.round(performance.now() - t0)} ms`
      : `> ${STOP_LIMIT_MS / 1000} s (SIGKILL)`;
    for (const s of sockets) s.destroy();

    console.log(`\n## reloop serve with clients that stop reading (${CLI})`);
    console.log(
      `session: ${big.lastSeq} records (${SESSION_MB} MB of transcript); page ${Math.round(pageBytes / 1024)} kB`,
    );
    console.log(
      `| RSS idle | + ${CLIENTS} stalled SSE clients (peak / 3 s) | ${WAIT_MS / 1000} s later | their answers | closed by the server | + ${PAGES} page requests at once | failed | SIGTERM → exit (10 stalled streams open) |`,
    );
    console.log('|---|---|---|---|---|---|---|---|');
    console.log(
      `| ${idle} MB | ${peakSse} / ${afterSse} MB | ${afterWait} MB | ${answered || 'none'} | ${closedByServer} of ${CLIENTS} | ${afterPages} MB | ${refused} | ${stopMs} |`,
    );
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
