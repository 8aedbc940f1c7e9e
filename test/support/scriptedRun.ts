/**
 * Runs the real CLI (`reloop run --script …`) on a real directory tree with a scripted model that
 * asks for the given tool calls, and reads what the run logged. For the sandbox tests: the model
 * is the adversary, and every answer it got is in the log.
 *
 *   const run = await scriptedRun(t, [[{ name: 'Read', input: { file_path: '../x' } }]], ['--permission-mode', 'plan']);
 *   expect(run.result('t1_0').isError).toBe(true);
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CLI_BIN, type CliResult, runCli, scratchHomeEnv } from './cli.ts';

export interface ToolCall {
  name: string;
  input: unknown;
}

export interface LoggedRecord {
  seq: number;
  type: string;
  data: Record<string, unknown>;
}

export interface ToolResult {
  content: string;
  isError: boolean;
  outcome: string;
}

export interface ScriptedRun {
  cli: CliResult;
  sessionId: string;
  logFile: string;
  /** The session's log, raw bytes as text. */
  logText: string;
  records: LoggedRecord[];
  /** The result of call `t<batch>_<index>`. */
  result(id: string): ToolResult;
  /** What the permission policy logged for call `id` (`permission.decided`'s data), as JSON text. */
  decision(id: string): string;
  results(): Map<string, ToolResult>;
  status: string;
}

/** The script: one turn per batch (all its calls in one response), then a final answer. */
export function scriptFor(batches: readonly (readonly ToolCall[])[], finalText = 'Done.') {
  return {
    turns: [
      ...batches.map((calls, b) => ({
        content: calls.map((c, i) => ({ type: 'tool_use', id: `t${b}_${i}`, name: c.name, input: c.input })),
        stop_reason: 'tool_use',
        usage: { input_tokens: 100, output_tokens: 10 },
      })),
      { text: finalText, usage: { input_tokens: 100, output_tokens: 5 } },
      // Spare answers: a stop hook that blocks once asks for one more turn.
      { text: finalText, usage: { input_tokens: 100, output_tokens: 5 } },
      { text: finalText, usage: { input_tokens: 100, output_tokens: 5 } },
    ],
  };
}

export interface ScriptedRunOptions {
  /** The project the tools run in. */
  cwd: string;
  /** Where the store and the script go (outside cwd, out of the model's reach). */
  work: string;
  args?: readonly string[];
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
}

async function prepare(batches: readonly (readonly ToolCall[])[], opts: ScriptedRunOptions) {
  await mkdir(opts.work, { recursive: true });
  const script = path.join(opts.work, `script-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(script, JSON.stringify(scriptFor(batches)));
  const store = path.join(opts.work, 'store');
  const args = [
    'run',
    '--script',
    script,
    '--store',
    store,
    '--cwd',
    opts.cwd,
    '--json',
    // The sandbox tests want the model told "no" when the policy asks (the default parks the run).
    '--on-ask',
    'deny',
    ...(opts.args ?? []),
    'go',
  ];
  return { store, args };
}

export async function scriptedRun(
  batches: readonly (readonly ToolCall[])[],
  opts: ScriptedRunOptions,
): Promise<ScriptedRun> {
  const { store, args } = await prepare(batches, opts);
  const cli = await runCli(args, { cwd: opts.work, env: opts.env, timeoutMs: opts.timeoutMs });
  return readRun(cli, store);
}

export async function readRun(cli: CliResult, store: string): Promise<ScriptedRun> {
  const line = cli.stdout.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`no result on stdout (exit ${cli.code}):\n${cli.stdout}\nstderr: ${cli.stderr}`);
  const { sessionId, status } = JSON.parse(line) as { sessionId: string; status: string };
  return readSession(cli, store, sessionId, status);
}

async function readSession(cli: CliResult, store: string, sessionId: string, status: string) {
  const logFile = path.join(store, 'sessions', `${sessionId}.jsonl`);
  const logText = await readFile(logFile, 'utf8');
  const records = logText
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as LoggedRecord);
  const results = new Map<string, ToolResult>();
  for (const r of records) {
    if (r.type !== 'tool.finished') continue;
    const d = r.data as {
      toolUseId: string;
      outcome: string;
      result: { content: unknown; isError: boolean };
    };
    const content =
      typeof d.result.content === 'string' ? d.result.content : JSON.stringify(d.result.content);
    results.set(d.toolUseId, { content, isError: d.result.isError, outcome: d.outcome });
  }
  return {
    cli,
    sessionId,
    logFile,
    logText,
    records,
    status,
    results: () => results,
    decision(id: string) {
      const rec = records.find(
        (r) => r.type === 'permission.decided' && (r.data as { toolUseId?: string }).toolUseId === id,
      );
      return JSON.stringify(rec?.data ?? null);
    },
    result(id: string) {
      const r = results.get(id);
      if (!r) throw new Error(`no result for ${id}; have ${[...results.keys()].join(', ')}\n${cli.stderr}`);
      return r;
    },
  };
}

/**
 * Starts the CLI without waiting for it: for tests that signal it mid-run. `exited` resolves with
 * what it printed; `run()` then reads the session it logged.
 */
export async function startScriptedRun(batches: readonly (readonly ToolCall[])[], opts: ScriptedRunOptions) {
  const { store, args } = await prepare(batches, opts);
  const env: Record<string, string> = scratchHomeEnv();
  for (const k of ['PATH', 'HOME', 'TMPDIR', 'LANG']) if (process.env[k]) env[k] = process.env[k] as string;
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd: opts.work,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    stderr += d;
  });
  const t0 = performance.now();
  const exited = new Promise<CliResult>((resolve) => {
    child.on('close', (code, signal) =>
      resolve({ code, signal, stdout, stderr, ms: performance.now() - t0 }),
    );
  });
  return { child, exited, run: async () => readRun(await exited, store) };
}
