import { AgentCatalog } from '../src/agents/index.ts';
import type { Script } from '../src/model/script.ts';
import { ScriptedModelClient } from '../src/model/scripted.ts';
import { counterIds, seededRandom, VirtualClock } from '../src/runtime/determinism.ts';
import { Session } from '../src/runtime/session.ts';
import { MemoryEventStore } from '../src/store/memoryStore.ts';
import { benchStatechart } from './loop.ts';
import { noop, noopScript } from './noopRounds.ts';

/**
 * Sub-agents: one parent whose one turn starts `children` Task calls at once, each child
 * doing `rounds` no-op tool rounds against a zero-latency scripted model, on a memory store.
 * Its cost per child round (the whole tree's wall time over children × rounds, the parent's
 * own two turns included) beside the single-session loop doing the same number of rounds in
 * the same process. Also how many children ran at once (from the order of their
 * `run.started` / `run.ended` records): 10 means parallel, 1 would mean serialised.
 */

interface TreeRun {
  usPerRound: number;
  mostAtOnce: number;
}

function treeScript(children: number, rounds: number): Script {
  const ids = Array.from({ length: children }, (_, i) => `toolu_child_${i}`);
  return {
    turns: [
      {
        content: ids.map((id) => ({
          type: 'tool_use' as const,
          id,
          name: 'Task',
          input: { description: id, prompt: `do ${rounds} rounds`, subagent_type: 'general-purpose' },
        })),
        stop_reason: 'tool_use',
      },
      { text: 'all children done', stop_reason: 'end_turn' },
    ],
    children: Object.fromEntries(ids.map((id) => [id, noopScript(rounds)])),
  };
}

export async function benchTree(children: number, rounds: number): Promise<TreeRun> {
  let running = 0;
  let most = 0;
  const parent = await Session.create({
    store: new MemoryEventStore(),
    model: new ScriptedModelClient(treeScript(children, rounds)),
    tools: [noop],
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds('bench-'),
    settings: { maxTurns: rounds + 1, contextWindow: 10_000_000 },
    subAgents: {
      agents: new AgentCatalog(),
      onChildRecord: (_child, r) => {
        if (r.type === 'run.started') most = Math.max(most, ++running);
        else if (r.type === 'run.ended') running--;
      },
    },
  });
  const t0 = performance.now();
  const result = await parent.submit('fan out');
  const total = performance.now() - t0;
  if (result.status !== 'completed') throw new Error(`tree bench ended ${result.status}/${result.reason}`);
  const finished = parent.state.messages.view()[2];
  const failed =
    Array.isArray(finished?.content) && finished.content.some((b) => 'is_error' in b && b.is_error);
  if (failed) throw new Error('a child of the tree bench did not complete');
  return { usPerRound: (total * 1000) / (children * rounds), mostAtOnce: most };
}

const f = (n: number) => n.toFixed(1);

/** Wall time and this process's CPU time (user + system) of one run, in ms. */
async function timed(run: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  global.gc?.();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await run();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { wall, cpu: (c.user + c.system) / 1000 };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

/**
 * Both shapes alternated, so a burst of load on the shared machine hits both alike. CPU time
 * is the primary measure here: wall time also counts the time other processes hold the core.
 */
export async function benchChildren(
  children = 10,
  rounds = 100,
  reps = Number(process.env.BENCH_REPS ?? 9),
): Promise<{ tree: number; single: number; ratio: number; mostAtOnce: number }> {
  const total = children * rounds;
  console.log(
    `\n## Sub-agents: a parent with ${children} children × ${rounds} tool rounds, zero-latency scripted model, memory store`,
  );
  console.log(
    `(median of ${reps} runs of each, alternated, after 3 warm-up runs of each; µs per tool round)`,
  );
  let most = 0;
  const tree = async () => {
    const r = await benchTree(children, rounds);
    most = Math.max(most, r.mostAtOnce);
  };
  const single = () => benchStatechart(total, new MemoryEventStore());
  for (let i = 0; i < 3; i++) {
    await tree();
    await single();
  }
  const t: { wall: number; cpu: number }[] = [];
  const s: { wall: number; cpu: number }[] = [];
  for (let i = 0; i < reps; i++) {
    t.push(await timed(tree));
    s.push(await timed(single));
  }
  const per = (ms: number) => (ms * 1000) / total;
  const row = (name: string, xs: { wall: number; cpu: number }[]) => {
    const cpu = xs.map((x) => per(x.cpu));
    const wall = xs.map((x) => per(x.wall));
    console.log(
      `| ${name} | ${f(median(cpu))} | ${f(Math.min(...cpu))}–${f(Math.max(...cpu))} | ${f(median(wall))} | ${f(Math.min(...wall))}–${f(Math.max(...wall))} |`,
    );
  };
  console.log('| run | CPU µs/round (median) | min–max | wall µs/round (median) | min–max |');
  console.log('|---|---|---|---|---|');
  row(`one session, ${total} rounds`, s);
  row(`parent + ${children} children × ${rounds} rounds (whole tree, per child round)`, t);
  const tc = median(t.map((x) => x.cpu));
  const sc = median(s.map((x) => x.cpu));
  console.log(
    `\nratio tree/single: CPU ${(tc / sc).toFixed(2)}×, wall ${(median(t.map((x) => x.wall)) / median(s.map((x) => x.wall))).toFixed(2)}× (target ≤ 1.2×); children running at once: ${most} of ${children}`,
  );
  return { tree: per(tc), single: per(sc), ratio: tc / sc, mostAtOnce: most };
}

if (import.meta.url === `file://${process.argv[1]}`) await benchChildren();
