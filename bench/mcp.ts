import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { McpServers } from '../src/mcp/servers.ts';
import type { Script } from '../src/model/script.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../src/runtime/session.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import type { Tool } from '../src/tools/types.ts';

/**
 * MCP's cost (docs/BENCHMARKS.md §12), each beside its baseline in the same run:
 * - a tool round through an MCP server over stdio, against the same round with a built-in tool
 *   doing the same work in process (busy `WORK_US` µs, echo its input): the difference is what the
 *   MCP round trip adds (target ≤ 1 ms);
 * - starting 5 servers of 20 tools each (initialize, tools/list, 100 tools built), against the
 *   same 5 processes started bare until each says it is ready: the difference is what listing
 *   adds beyond the servers' own start (target ≤ 200 ms).
 */

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = (() => {
  const cache = HERE.lastIndexOf(`${path.sep}node_modules${path.sep}`);
  return cache >= 0 ? HERE.slice(0, cache) : path.resolve(HERE, '..');
})();
const SERVER = path.join(ROOT, 'test/fixtures/mcp/benchServer.mjs');
const WORK_US = 200;

function busy(us: number): void {
  const end = performance.now() + us / 1000;
  while (performance.now() < end) {}
}

/** The built-in side: the same work in process. */
const builtinEcho: Tool<{ n: number }> = {
  name: 't0',
  description: 'Echoes n.',
  inputSchema: z.object({ n: z.number() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call({ n }) {
    busy(WORK_US);
    return { content: `ok ${n}` };
  },
};

function script(rounds: number, tool: string): Script {
  const usage = {
    input_tokens: 10,
    output_tokens: 5,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  };
  const turns: Script['turns'] = [];
  for (let i = 0; i < rounds; i++)
    turns.push({
      content: [{ type: 'tool_use', id: `t${i}`, name: tool, input: { n: i } }],
      stop_reason: 'tool_use',
      usage,
    });
  turns.push({ text: 'done', stop_reason: 'end_turn', usage });
  return { turns };
}

/** ms per tool round of a session whose one tool is `tool` (a built-in, or an MCP server's). */
async function roundMs(
  rounds: number,
  tool: string,
  extra: Partial<SessionOptions>,
): Promise<{ ms: number; cpuUs: number }> {
  const session = await Session.create({
    store: new MemoryEventStore(),
    model: new ScriptedModelClient(script(2 * rounds + 1, tool)),
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('mcp-'),
    settings: { maxTurns: 2 * rounds + 2, contextWindow: 100_000_000 },
    ...extra,
  });
  // The servers start inside the run: the first `rounds` rounds warm up, the rest are measured.
  const marks: number[] = [];
  const cpu: number[] = [];
  const off = (
    session as unknown as { writer: { onRecord: (f: (r: { type: string }) => void) => () => void } }
  ).writer.onRecord((r) => {
    if (r.type !== 'tool.finished') return;
    marks.push(performance.now());
    const u = process.cpuUsage();
    cpu.push(u.user + u.system);
  });
  const r = await session.submit('go');
  off();
  await session.close();
  if (r.status !== 'completed') throw new Error(`bench run ended ${r.status}/${r.reason}`);
  const n = rounds + 1;
  return {
    ms: (marks[2 * rounds]! - marks[rounds - 1]!) / n,
    cpuUs: (cpu[2 * rounds]! - cpu[rounds - 1]!) / n,
  };
}

/** The 5 processes started bare, until each says it is ready (what the servers' start costs). */
async function bareStart(servers: number, tools: number): Promise<number> {
  const t0 = performance.now();
  const children = await Promise.all(
    Array.from({ length: servers }, () => {
      const child = spawn(process.execPath, [SERVER, String(tools), '0'], {
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      return new Promise<typeof child>((resolve) => {
        child.stderr.setEncoding('utf8').on('data', (s: string) => {
          if (s.includes('ready')) resolve(child);
        });
      });
    }),
  );
  const ms = performance.now() - t0;
  for (const c of children) c.kill();
  return ms;
}

async function clientStart(servers: number, tools: number): Promise<{ ms: number; listed: number }> {
  const t0 = performance.now();
  const started = await McpServers.start(
    Array.from({ length: servers }, (_, i) => ({
      name: `s${i}`,
      spec: { command: process.execPath, args: [SERVER, String(tools), '0'] },
      source: 'flag' as const,
    })),
    { cwd: ROOT, env: { PATH: process.env.PATH }, onEvent: () => {} },
  );
  const ms = performance.now() - t0;
  const listed = started.tools().length;
  await started.close();
  return { ms, listed };
}

export async function benchMcp(rounds = 500): Promise<void> {
  const mcpStdio = {
    mcpServers: { bench: { command: process.execPath, args: [SERVER, '1', String(WORK_US)] } },
  };
  const best = { builtin: Infinity, stdio: Infinity, bare: Infinity, client: Infinity };
  const cpu = { builtin: Infinity, stdio: Infinity };
  let listed = 0;
  // Interleaved rounds, the fastest kept: the host's speed drifts.
  for (let i = 0; i < 3; i++) {
    const b = await roundMs(rounds, 't0', { tools: [builtinEcho] });
    const m = await roundMs(rounds, 'mcp__bench__t0', { tools: [], ...mcpStdio });
    best.builtin = Math.min(best.builtin, b.ms);
    best.stdio = Math.min(best.stdio, m.ms);
    cpu.builtin = Math.min(cpu.builtin, b.cpuUs);
    cpu.stdio = Math.min(cpu.stdio, m.cpuUs);
    best.bare = Math.min(best.bare, await bareStart(5, 20));
    const c = await clientStart(5, 20);
    best.client = Math.min(best.client, c.ms);
    listed = c.listed;
  }
  const ms = (x: number) => `${x.toFixed(3)} ms`;
  console.log(`\nMCP (§12): a tool round with ${WORK_US} µs of work, ${rounds} rounds, best of 3`);
  console.log(`  built-in tool, in process        ${ms(best.builtin)} / round`);
  console.log(`  MCP tool over stdio              ${ms(best.stdio)} / round`);
  console.log(`  what the MCP round trip adds     ${ms(best.stdio - best.builtin)} (target ≤ 1 ms)`);
  console.log(
    `  client CPU / round: built-in ${cpu.builtin.toFixed(0)} µs (${WORK_US} of them the work), MCP ${cpu.stdio.toFixed(0)} µs (the work is the server's)`,
  );
  console.log(`  load average (1 min) during the run: ${loadavg()[0]?.toFixed(1)} on ${cpus().length} cores`);
  console.log(`start-up: 5 servers × 20 tools (${listed} tools listed), best of 3`);
  console.log(`  the 5 processes bare, to ready   ${ms(best.bare)}`);
  console.log(`  McpServers.start (init + list)   ${ms(best.client)}`);
  console.log(`  what connecting and listing add  ${ms(best.client - best.bare)} (target ≤ 200 ms)`);
}

if (import.meta.url === `file://${process.argv[1]}`)
  await benchMcp(Number(process.env.BENCH_MCP_ROUNDS ?? 500));
