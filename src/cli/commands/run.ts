import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import { createCommandStopHook } from '../../hooks/commandHooks.ts';
import { loadHookSettings } from '../../hooks/settings.ts';
import type { StopHook } from '../../hooks/types.ts';
import { AnthropicModelClient, hasApiKey } from '../../model/anthropic.ts';
import { costOf, priceOf } from '../../model/pricing.ts';
import { parseScriptText } from '../../model/script.ts';
import { ScriptedModelClient } from '../../model/scripted.ts';
import type { ModelClient } from '../../model/types.ts';
import type { RunSettings } from '../../runtime/config.ts';
import { NothingToRunError, type RunResult, Session, type SessionOptions } from '../../runtime/session.ts';
import type { FileEventStore } from '../../store/fileStore.ts';
import { builtinTools } from '../../tools/builtin/index.ts';
import {
  createPermissionPolicy,
  type PermissionMode,
  PermissionModeSchema,
} from '../../tools/permissions/index.ts';
import type { AskUser, ToolHooks } from '../../tools/types.ts';
import { runDemo } from '../demo.ts';
import {
  CommandFailed,
  EXIT,
  type GlobalOptions,
  openStore,
  out,
  printJson,
  selfCommand,
  storeDir,
  UsageError,
  withCommonOptions,
} from '../io.ts';
import { liveOutput } from '../liveOutput.ts';
import { subAgentsFor } from '../subAgents.ts';

export interface RunOptions extends GlobalOptions {
  model?: string;
  script?: string;
  cwd?: string;
  maxTurns?: string;
  maxBudgetUsd?: string;
  permissionMode?: string;
  allow: string[];
  deny: string[];
  stopHook: string[];
  settings?: string;
  fallbackModel?: string;
  resume?: string;
  demo?: boolean;
  agentsDir: string[];
  subagentMaxTurns?: string;
  passEnv: string[];
}

const collect = (v: string, prev: string[]) => [...prev, v];
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

export function registerRun(program: Command): void {
  withCommonOptions(
    program
      .command('run [prompt]')
      .description('run the agent loop once on a prompt (Anthropic model, a script, or the offline demo)')
      .option(
        '--model <name>',
        'Anthropic model name (needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured)',
      )
      .option('--script <file>', 'answer from a JSON script instead of a model (see docs/script-format.md)')
      .option('--demo', 'offline demo: fix a failing test in a scratch copy of a tiny project')
      .option('--cwd <dir>', 'working directory of the tools (default: current directory)')
      .option('--max-turns <n>', 'tool rounds before the run stops (max_turns_reached)')
      .option('--max-budget-usd <usd>', 'stop when the run has cost more than this (budget_exhausted)')
      .option('--permission-mode <mode>', 'default | acceptEdits | bypassPermissions | plan', 'default')
      .option(
        '--allow <rule>',
        'allow rule, e.g. "Bash(npm test:*)" or "Edit(src/**)" (repeatable)',
        collect,
        [],
      )
      .option('--deny <rule>', 'deny rule (repeatable)', collect, [])
      .option('--stop-hook <command>', 'command run when the model wants to stop (repeatable)', collect, [])
      .option('--settings <file>', 'Claude-Code-style settings JSON with hooks (PreToolUse, Stop)')
      .option('--fallback-model <name>', 'model to switch to after repeated overloads (529)')
      .option('--resume <session>', 'continue a session (after a crash the interrupted run is closed first)')
      .option(
        '--pass-env <name>',
        'let Bash and hooks see this secret variable (withheld by default; see docs/security.md) (repeatable)',
        collect,
        [],
      )
      .option(
        '--agents-dir <dir>',
        'more sub-agent definitions (*.md, as .claude/agents) for the Task tool (repeatable)',
        collect,
        [],
      )
      .option('--subagent-max-turns <n>', "tool rounds of each sub-agent's run (default: --max-turns)"),
  ).action(async (prompt: string | undefined, opts: RunOptions) => {
    if (opts.demo) {
      if (opts.resume || opts.script || opts.model) {
        throw new UsageError(
          '--demo runs its own scripted session: it takes no --resume, --script or --model',
        );
      }
      // Checked before the demo copies its project, so bad usage leaves nothing behind.
      checkRunFlags({ ...opts, script: 'demo' });
      const result = await runDemo(opts);
      process.exitCode = result.status === 'completed' ? EXIT.ok : EXIT.failed;
      return;
    }
    if (!prompt && !opts.resume)
      throw new UsageError('a prompt is required (or --resume <session> to continue one)');
    // Every flag is checked before the store is opened, so bad usage leaves no trace on disk.
    checkRunFlags(opts);
    // Agent files too: a bad one stops the run before the store is touched.
    const subAgents = await runSubAgents(opts);
    const store = await openStore(opts);
    try {
      const result = await runWith(store, prompt ?? null, opts, { subAgents });
      process.exitCode = result.status === 'completed' ? EXIT.ok : EXIT.failed;
    } finally {
      await store.close();
    }
  });
}

/** Builds the session from the flags and runs it once; shared by `run` and the demo. */
export async function runWith(
  store: FileEventStore,
  prompt: string | null,
  opts: RunOptions,
  extra: Partial<SessionOptions> = {},
  /** Whether `--json` prints the run's result object (the demo prints its own, extended one). */
  { printResult = true }: { printResult?: boolean } = {},
): Promise<RunResult> {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const mode = parseMode(opts.permissionMode);
  const settings: RunSettings = { ...extra.settings };
  if (opts.maxTurns !== undefined) settings.maxTurns = positiveInt('--max-turns', opts.maxTurns);
  if (opts.maxBudgetUsd !== undefined)
    settings.maxBudgetUsd = positiveNumber('--max-budget-usd', opts.maxBudgetUsd);
  if (opts.fallbackModel) settings.fallbackModel = opts.fallbackModel;
  if (opts.model) settings.model = opts.model;
  // Costs come from the price table: a model it does not know costs $0 in every total, so a
  // budget in dollars could never stop the run. Said once, up front, on stderr.
  for (const name of [opts.model, opts.fallbackModel]) {
    if (name && !opts.script && !priceOf(name)) {
      process.stderr.write(
        `warning: no price known for model ${JSON.stringify(name)}: its usage counts as $0${opts.maxBudgetUsd !== undefined ? ', so --max-budget-usd cannot stop this run' : ''}\n`,
      );
    }
  }

  let session: Session | undefined;
  const model = extra.model ?? (await modelFrom(opts, () => session?.abort()));
  const canUseTool = createPermissionPolicy({ mode, allow: opts.allow, deny: opts.deny, cwd });
  const outsideAllowed = opts.allow.some((r) => /\((\/|~\/|\.\.)/.test(r));
  const passEnv = opts.passEnv ?? [];
  const stopHooks: StopHook[] = opts.stopHook.map((c) => createCommandStopHook(c, { cwd, passEnv }));
  let toolHooks: ToolHooks | undefined;
  if (opts.settings) {
    const hooks = await loadHookSettings(path.resolve(opts.settings), { cwd, passEnv });
    stopHooks.push(...hooks.stopHooks);
    toolHooks = hooks.toolHooks;
    for (const w of hooks.warnings) process.stderr.write(`warning: ${w}\n`);
  }
  const live = liveOutput((s) => process.stdout.write(s));
  const quiet = opts.json === true;
  const common: SessionOptions = {
    store,
    model,
    cwd,
    tools: builtinTools({ allowOutsideCwd: outsideAllowed, bash: { passEnv } }),
    subAgents: extra.subAgents ?? (await runSubAgents({ ...opts, cwd })),
    canUseTool,
    askUser: !quiet && process.stdin.isTTY ? terminalAsk : undefined,
    toolHooks,
    stopHooks,
    settings,
    ...(quiet ? {} : { onRecord: live.onRecord, onStreamEvent: live.onStreamEvent }),
    ...extra,
  };
  session = opts.resume ? await Session.open(opts.resume, common) : await Session.create(common);
  if (!quiet) out(`session ${session.id}${opts.resume ? ' (resumed)' : ''}`);
  // SIGTERM (kill, systemd, docker stop) and SIGHUP (closed terminal) end the run like Ctrl-C: the
  // abort is logged and the Bash process group killed, instead of the process dying mid-tool.
  const onSignal = (signal: NodeJS.Signals) => session?.abort(`interrupted (${signal})`);
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  let result: RunResult;
  try {
    result = await session.submit(prompt).catch((e: unknown) => {
      // Bad usage, not a failed run: `--resume` with no prompt on a session with nothing to continue.
      if (e instanceof NothingToRunError) throw new UsageError(e.message);
      throw e;
    });
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
    live.end();
  }
  const { sessionId, runId, status, reason, turns, usage } = result;
  if (quiet) {
    if (printResult) printJson({ sessionId, runId, status, reason, turns, usage });
  } else {
    out(
      `\n${status === 'completed' ? '✓' : '✗'} ${status} (${reason}) after ${turns} turns — ${usage.inputTokens} in / ${usage.outputTokens} out, $${usage.costUsd.toFixed(4)}`,
    );
    if (result.error) out(`  error: ${result.error}`);
    out(`  log:    ${path.join(storeDir(opts), 'sessions', `${sessionId}.jsonl`)}`);
    // A run that started sub-agents is verified with them: --tree checks each child's log too.
    const tree = session.subAgentsRun > 0 ? ' --tree' : '';
    out(
      `  replay: ${selfCommand()} replay ${sessionId} --verify${tree}${opts.store ? ` --store ${opts.store}` : ''}`,
    );
    out(
      `  view:   ${selfCommand()} viz ${sessionId} --format html --out session.html${opts.store ? ` --store ${opts.store}` : ''}`,
    );
  }
  return result;
}

async function modelFrom(opts: RunOptions, requestAbort: () => void): Promise<ModelClient> {
  if (opts.script) {
    const file = path.resolve(opts.script);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read the script ${file}: ${(e as Error).message}`);
    }
    return new ScriptedModelClient(parseScriptText(text, file), { file, requestAbort, costOf });
  }
  assertModelAvailable();
  return new AnthropicModelClient();
}

/** The Task tool's agents for a run (its working directory's and `--agents-dir`'s). */
export function runSubAgents(opts: RunOptions) {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const maxTurns =
    opts.subagentMaxTurns !== undefined
      ? positiveInt('--subagent-max-turns', opts.subagentMaxTurns)
      : undefined;
  return subAgentsFor(
    cwd,
    opts.agentsDir ?? [],
    builtinTools().map((t) => t.name),
    maxTurns,
  );
}

/** Validates the flags that need no I/O; throws UsageError / CommandFailed (exit 2). */
export function checkRunFlags(opts: RunOptions): void {
  parseMode(opts.permissionMode);
  for (const name of opts.passEnv ?? []) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new UsageError(`--pass-env takes a variable name, got ${JSON.stringify(name)}`);
  }
  if (opts.maxTurns !== undefined) positiveInt('--max-turns', opts.maxTurns);
  if (opts.subagentMaxTurns !== undefined) positiveInt('--subagent-max-turns', opts.subagentMaxTurns);
  if (opts.maxBudgetUsd !== undefined) positiveNumber('--max-budget-usd', opts.maxBudgetUsd);
  if (!opts.script) assertModelAvailable();
}

function assertModelAvailable(): void {
  if (!hasApiKey()) {
    throw new CommandFailed(
      'no model to talk to: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for any server that speaks the Messages API), ' +
        'pass --script <file.json> to answer from a script, or try the offline demo: reloop run --demo',
      EXIT.usage,
    );
  }
}

const terminalAsk: AskUser = async (req, message) => {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const detail = JSON.stringify(req.input).slice(0, 200);
    const answer = await rl.question(
      `\nAllow ${req.tool.name} ${detail}?${message ? ` (${message})` : ''} [y/N] `,
    );
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
};

function parseMode(raw: string | undefined): PermissionMode {
  const parsed = PermissionModeSchema.safeParse(raw ?? 'default');
  if (!parsed.success)
    throw new UsageError(`--permission-mode must be one of ${PermissionModeSchema.options.join(', ')}`);
  return parsed.data;
}

function positiveInt(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`${name} must be a whole number ≥ 1, got ${JSON.stringify(raw)}`);
  return n;
}

function positiveNumber(name: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`${name} must be a number > 0, got ${JSON.stringify(raw)}`);
  return n;
}
