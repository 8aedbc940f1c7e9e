/**
 * The scripted session the export tests trace, through the real CLI: a tool round, a retried
 * request (429), an auto-compaction, a `Task` sub-agent whose Bash call waits for approval (the
 * tree parks, exit 3), the approval, and the resumed tree to completion.
 */
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { onlyJson, runCli } from '../support/cli.ts';
import type { ReceivedSpan } from '../support/otlpReceiver.ts';

export interface Scenario {
  cwd: string;
  store: string;
  parent: string;
  child: string;
}

const read = {
  content: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'notes.txt' } }],
  stop_reason: 'tool_use',
  // Past the auto-compaction threshold (167 000 of a 200 000 window): the round ends in a compaction.
  usage: { input_tokens: 170_000, output_tokens: 12, cache_read_input_tokens: 1_000 },
};
const task = {
  content: [
    {
      type: 'tool_use',
      id: 'toolu_task',
      name: 'Task',
      input: { description: 'deploy', prompt: 'Deploy it.', subagent_type: 'deployer' },
    },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 2_000, output_tokens: 20 },
};
const parentEnd = { text: 'The deployer is done.', usage: { input_tokens: 2_100, output_tokens: 6 } };
const childAsk = (marker: string) => ({
  content: [
    { type: 'tool_use', id: 'toolu_touch', name: 'Bash', input: { command: `echo ran >> ${marker}` } },
  ],
  stop_reason: 'tool_use',
  usage: { input_tokens: 300, output_tokens: 9 },
});
const childEnd = { text: 'deployed', usage: { input_tokens: 400, output_tokens: 2 } };

export async function scenarioProject(root: string, name: string): Promise<{ cwd: string; store: string }> {
  const cwd = await mkdtemp(path.join(root, `${name}-`));
  await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
  await writeFile(
    path.join(cwd, '.claude', 'agents', 'deployer.md'),
    '---\nname: deployer\ndescription: Deploys.\ntools: Bash\n---\nYou deploy.\n',
  );
  await writeFile(path.join(cwd, 'notes.txt'), 'ship it on friday\n');
  return { cwd, store: path.join(cwd, 'store') };
}

async function scriptFile(cwd: string, part: 'first' | 'after'): Promise<string> {
  const marker = path.join(cwd, 'ran');
  const file = path.join(cwd, `script-${part}.json`);
  const s =
    part === 'first'
      ? {
          turns: [
            { error: { status: 429, type: 'rate_limit_error', message: 'slow down', retry_after_ms: 5 } },
            read,
            { for: 'compaction', text: 'Summary: notes.txt says to ship on friday.' },
            task,
          ],
          children: { toolu_task: { turns: [childAsk(marker)] } },
        }
      : { turns: [parentEnd], children: { toolu_task: { turns: [childEnd] } } };
  await writeFile(file, JSON.stringify(s));
  return file;
}

/** Runs the scenario with `args` added to both runs (e.g. `--otel`) and `env` for every command. */
export async function runScenario(
  project: { cwd: string; store: string },
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<Scenario & { stderr: string[] }> {
  const { cwd, store } = project;
  const first = await runCli(
    ['run', '--script', await scriptFile(cwd, 'first'), '--store', store, '--json', ...args, 'deploy'],
    { cwd, env },
  );
  if (first.code !== 3) throw new Error(`first run: exit ${first.code}\n${first.stderr}`);
  const parent = onlyJson<{ sessionId: string }>(first).sessionId;
  const rows = onlyJson<{ session: string; toolUseId: string }[]>(
    await runCli(['approvals', '--store', store, '--json'], { cwd }),
  );
  const child = rows[0]!.session;
  const approved = await runCli(['approve', child, 'toolu_touch', '--by', 'alice', '--store', store], {
    cwd,
  });
  if (approved.code !== 0) throw new Error(`approve: ${approved.stderr}`);
  const second = await runCli(
    [
      'run',
      '--resume',
      parent,
      '--script',
      await scriptFile(cwd, 'after'),
      '--store',
      store,
      '--json',
      ...args,
    ],
    { cwd, env },
  );
  if (second.code !== 0) throw new Error(`resumed run: exit ${second.code}\n${second.stderr}`);
  return { cwd, store, parent, child, stderr: [first.stderr, second.stderr] };
}

/** The spans as an indented tree, children in start order (then by name): one line each. */
export function treeOf(spans: readonly ReceivedSpan[]): string[] {
  const byParent = new Map<string | null, ReceivedSpan[]>();
  const ids = new Set(spans.map((s) => s.spanId));
  for (const s of spans) {
    const p = s.parentSpanId !== null && ids.has(s.parentSpanId) ? s.parentSpanId : null;
    byParent.set(p, [...(byParent.get(p) ?? []), s]);
  }
  const order = (a: ReceivedSpan, b: ReceivedSpan) =>
    BigInt(a.startTimeUnixNano) < BigInt(b.startTimeUnixNano)
      ? -1
      : BigInt(a.startTimeUnixNano) > BigInt(b.startTimeUnixNano)
        ? 1
        : Number(a.attributes['reloop.seq']) - Number(b.attributes['reloop.seq']);
  const lines: string[] = [];
  const walk = (parent: string | null, depth: number) => {
    for (const s of [...(byParent.get(parent) ?? [])].sort(order)) {
      lines.push(
        `${'  '.repeat(depth)}${s.name}${s.status.code === 2 ? ` ! ${s.attributes['error.type']}` : ''}`,
      );
      walk(s.spanId, depth + 1);
    }
  };
  walk(null, 0);
  return lines;
}
