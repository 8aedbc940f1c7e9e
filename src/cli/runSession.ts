import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { HookSettingsError } from '../hooks/config.ts';
import { runHooksFromLayers } from '../hooks/settings.ts';
import { hasApiKey } from '../model/credentials.ts';
import { costOf, priceOf } from '../model/pricing.ts';
import { parseScriptText, ScriptError } from '../model/script.ts';
import { ScriptedModelClient } from '../model/scripted.ts';
import type { ModelClient } from '../model/types.ts';
import { AwaitingApprovalError, pendingApprovals, pendingBelow } from '../runtime/approvals.ts';
import { DEFAULT_SYSTEM_PROMPT, type RunSettings } from '../runtime/config.ts';
import { NothingToRunError, type RunResult, Session, type SessionOptions } from '../runtime/session.ts';
import type { SessionEvent } from '../runtime/streamEvents.ts';
import { type FileSource, parseSettingSources, SettingSourcesError } from '../settings/sources.ts';
import type { LogRecord } from '../store/records.ts';
import type { SessionLease } from '../store/sessionLease.ts';
import type { EventStore } from '../store/types.ts';
import { builtinTools } from '../tools/builtin/index.ts';
import { type PermissionMode, PermissionModeSchema } from '../tools/permissions/index.ts';
import type { CanUseTool } from '../tools/types.ts';
import type { RunOptions } from './commands/run.ts';
import {
  CommandFailed,
  EXIT,
  err,
  out,
  plural,
  printJson,
  selfCommand,
  storeDir,
  storeLabel,
  storeLocationOf,
  UsageError,
  writeText,
} from './io.ts';
import { liveOutput } from './liveOutput.ts';
import { mcpServersFor } from './mcpFlags.ts';
import { offeredTools, runPermissions } from './permissionFlags.ts';
import { parseOnAsk } from './runFlags.ts';
import { leaseSession } from './sessionLease.ts';
import { subAgentsFor } from './subAgents.ts';
import { systemPromptOf } from './systemPromptFlags.ts';
import { terminalAsk } from './terminalAsk.ts';

const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
const MEMORY_SOURCES = ['user', 'project', 'local'] as const;

/** The memory a run reads: all three sources, or those `--setting-sources` names. */
function memorySources(opts: RunOptions): readonly FileSource[] {
  if (opts.settingSources === undefined) return MEMORY_SOURCES;
  try {
    return parseSettingSources(opts.settingSources);
  } catch (e) {
    if (e instanceof SettingSourcesError) throw new UsageError(e.message, e.code);
    throw e;
  }
}

/**
 * What `reloop run` (and the demo) needs before it may touch the store: every flag parsed,
 * the working directory checked, the script and the settings file read and validated. Any of
 * these failing is bad usage (exit 2) and nothing has been written.
 */
export interface PreparedRun {
  cwd: string;
  settings: RunSettings;
  model: ModelClient;
  options: Omit<SessionOptions, 'store' | 'model'>;
  /** The permission mode the run has (the flag, else the settings' defaultMode, else default). */
  mode?: PermissionMode;
  /** The run's policy (every settings layer, the flags) with more allow rules, source `cliArg`. */
  policyWith?: (moreAllow: readonly string[]) => CanUseTool;
  /** Set once the session exists: a script's `abort` turn aborts it. */
  session?: Session;
}

/** Parses, reads and checks everything a run needs; throws UsageError (exit 2) on the first problem. */
export async function prepareRun(
  opts: RunOptions,
  extra: Partial<SessionOptions> = {},
): Promise<PreparedRun> {
  const { model: given, settings: base, ...rest } = extra;
  const { settings } = checkRunFlags(opts, base);
  if (!given && !opts.script) assertModelAvailable();
  const cwd = await workingDirectory(opts.cwd);
  const system = await systemPromptOf(opts, DEFAULT_SYSTEM_PROMPT);
  if (system !== undefined) settings.system = system;

  const prepared: PreparedRun = {
    cwd,
    settings,
    model: undefined as unknown as ModelClient,
    options: {},
  };
  prepared.model = given ?? (await modelFrom(opts, () => prepared.session?.abort()));
  const passEnv = opts.passEnv ?? [];
  // The settings layers (user, project, local, --settings, managed) and the command line's rules:
  // the same layers go to the permission policy, the hooks and the MCP approvals.
  const { layers, setup, policyWith } = await runPermissions(
    opts,
    cwd,
    storeLocationOf(opts).kind === 'file' ? [storeDir(opts)] : [],
  );
  const hooks = hookSettings(layers, opts);
  for (const w of hooks.warnings) err(`warning: ${w}`);
  // Costs come from the price table: a model it does not know costs $0 in every total, so a
  // budget in dollars could never stop the run. Said once, up front, on stderr.
  for (const name of [opts.model, opts.fallbackModel]) {
    if (name && !opts.script && !priceOf(name)) {
      err(
        `warning: no price known for model ${JSON.stringify(name)}: its usage counts as $0${opts.maxBudgetUsd !== undefined ? ', so --max-budget-usd cannot stop this run' : ''}`,
      );
    }
  }
  const quiet = machineOutput(opts);
  // Agent files too: a bad one stops the run before the store is touched.
  const subAgents = rest.subAgents ?? (await runSubAgents({ ...opts, cwd }));
  // MCP servers: a bad --mcp-config is exit 2 here; a project server nobody approved is a warning.
  const mcpServers = await mcpServersFor(opts, cwd, layers);
  prepared.mode = setup.mode;
  prepared.policyWith = policyWith;
  prepared.options = {
    cwd,
    // CLAUDE.md memory, as Claude Code reads it: the user's, the project's and the local one
    // (`--setting-sources` picks which, as it does for the settings files).
    memory: { sources: memorySources(opts) },
    // `Task` is a built-in tool for `--tools` and a whole-tool deny rule, as in Claude Code.
    ...((await offeredTools([{ name: 'Task' }], opts.tools, setup.rules.deny, builtinNames())).length
      ? { subAgents }
      : {}),
    tools: await offeredTools(
      builtinTools({
        // Outside cwd the tools open only what an allow rule (or an added directory) names,
        // checked on what they really open.
        allowOutsideCwd: setup.toolReach,
        // Grep and Glob over a tree skip what a Read deny or ask rule covers.
        ...(setup.readDenied ? { readDenied: setup.readDenied } : {}),
        bash: { passEnv },
        // A redirect to another host is followed only where an allow rule names that host.
        webFetch: { redirectAllowed: setup.redirectAllowed },
      }),
      opts.tools,
      setup.rules.deny,
      builtinNames(),
    ),
    canUseTool: setup.canUseTool,
    // What the policy enforces, for the log's recorded setup (a changed rule shows on resume and rerun).
    permissions: { mode: setup.mode, rules: setup.facts },
    ...(mcpServers ? { mcpServers } : {}),
    // One prompt at a time: parallel sub-agents share this askUser (src/cli/terminalAsk.ts).
    // Ctrl-C at the prompt ends the run `aborted`, as Ctrl-C anywhere else does.
    askUser:
      !quiet && process.stdin.isTTY
        ? terminalAsk(process.stdin, process.stderr, {
            onInterrupt: () => prepared.session?.abort('interrupted (Ctrl-C at the permission prompt)'),
          })
        : undefined,
    unattendedAsk: parseOnAsk(opts.onAsk),
    hooks: hooks.hooks,
    hookOptions: { permissionMode: setup.mode, passEnv },
    ...(opts.acceptSetupChange ? { acceptSetupChange: true } : {}),
    ...rest,
    settings,
  };
  return prepared;
}

/** The flags that need no I/O, parsed; throws UsageError (exit 2). */
export function checkRunFlags(
  opts: RunOptions,
  base: RunSettings = {},
): { mode: PermissionMode | undefined; settings: RunSettings } {
  const mode = opts.permissionMode === undefined ? undefined : parseMode(opts.permissionMode);
  parseOnAsk(opts.onAsk);
  for (const name of opts.passEnv ?? []) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new UsageError(`--pass-env takes a variable name, got ${JSON.stringify(name)}`);
  }
  const settings: RunSettings = { ...base };
  if (opts.maxTurns !== undefined) settings.maxTurns = positiveInt('--max-turns', opts.maxTurns);
  if (opts.subagentMaxTurns !== undefined) positiveInt('--subagent-max-turns', opts.subagentMaxTurns);
  if (opts.maxAttempts !== undefined)
    settings.maxTransportAttempts = positiveInt('--max-attempts', opts.maxAttempts);
  if (opts.maxBudgetUsd !== undefined)
    settings.maxBudgetUsd = positiveNumber('--max-budget-usd', opts.maxBudgetUsd);
  if (opts.fallbackModel) settings.fallbackModel = opts.fallbackModel;
  if (opts.model) settings.model = opts.model;
  return { mode, settings };
}

/** Runs a prepared session once on the store; shared by `run` and the demo. */
export async function runPrepared(
  store: EventStore,
  prompt: string | null,
  prepared: PreparedRun,
  opts: RunOptions,
  /** Whether `--json` prints the run's result object (the demo prints its own, extended one). */
  { printResult = true }: { printResult?: boolean } = {},
): Promise<RunResult> {
  const quiet = machineOutput(opts);
  const streamJson = opts.outputFormat === 'stream-json';
  const live = liveOutput(writeText);
  const common: SessionOptions = {
    store,
    model: prepared.model,
    ...prepared.options,
    // Under --json the log's lines are not shown; what hooks say to the user still is (stderr),
    // and so is memory that was not read.
    onRecord: (r, state) => {
      memoryNotices(r);
      if (quiet) hookNotices(r);
      else live.onRecord(r, state);
    },
    ...(quiet ? {} : { onStreamEvent: live.onStreamEvent }),
  };
  // On PostgreSQL the session's lease, the one a worker's claim is: taken before its log is read,
  // so a session another process drives is refused (SESSION_LOCKED) rather than taken over.
  let lease = opts.resume ? await leaseSession(store, opts.resume, { as: 'run --resume' }) : null;
  let session: Session;
  try {
    session = opts.resume ? await Session.open(opts.resume, common) : await Session.create(common);
    lease ??= opts.resume ? null : await leaseSession(store, session.id, { as: 'run' });
  } catch (e) {
    await lease?.release('restore');
    throw e;
  }
  const held = lease;
  // A lease lost (this process stalled past it and another took the session): stop driving it.
  held?.lost.addEventListener('abort', () => session.abort('lease lost: another process holds the session'));
  try {
    prepared.session = session;
    if (!quiet) out(`session ${session.id}${opts.resume ? ' (resumed)' : ''}`);
    // SIGTERM (kill, systemd, docker stop) and SIGHUP (closed terminal) end the run like Ctrl-C: the
    // abort is logged and the Bash process group killed, instead of the process dying mid-tool.
    const onSignal = (signal: NodeJS.Signals) => session.abort(`interrupted (${signal})`);
    for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
    let result: RunResult;
    try {
      const running = streamJson ? printEvents(session.stream(prompt)) : session.submit(prompt);
      result = await running.catch((e: unknown) => {
        // Bad usage, not a failed run: `--resume` with no prompt on a session with nothing to continue.
        if (e instanceof NothingToRunError || e instanceof AwaitingApprovalError)
          throw new UsageError(e.message, e.code);
        throw e;
      });
    } finally {
      for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
      live.end();
      // Its MCP servers end with the command (stdio processes, HTTP sessions).
      await session.close();
    }
    // The process is done with the session: its SessionEnd hooks run (their answers are logged).
    await session.end('other');
    const { sessionId, runId, status, reason, turns, usage } = result;
    if (quiet) {
      // stream-json printed the run's `result` event last; --json prints the result object.
      if (printResult && !streamJson) printJson({ sessionId, runId, status, reason, turns, usage });
    } else {
      out();
      out(
        `${status === 'completed' ? '✓' : '✗'} ${status} (${reason}) after ${plural(turns, 'turn')} — ${usage.inputTokens} in / ${usage.outputTokens} out, $${usage.costUsd.toFixed(4)}`,
      );
      if (result.error) out(`  error: ${result.error}`);
      if (status === 'paused') {
        for (const a of pendingApprovals(session.state)) {
          out(`  waits:  ${a.tool} ${JSON.stringify(a.input).slice(0, 100)} (${a.toolUseId})`);
        }
        // Parked on sub-agents: their calls are answered in their own sessions.
        const below = await pendingBelow(common.store, sessionId, session.state);
        for (const w of below) {
          out(
            `  waits:  ${w.entry.tool} ${JSON.stringify(w.entry.input).slice(0, 100)} (${w.entry.toolUseId} of sub-agent ${w.session})`,
          );
        }
        out(
          `  answer: ${selfCommand()} approve|deny ${below.length > 0 ? '<session>' : sessionId} <toolUseId>, then run --resume ${sessionId}`,
        );
      }
      const where = storeLocationOf(opts);
      const store = opts.store ? ` --store ${storeLabel(opts)}` : '';
      out(
        `  log:    ${where.kind === 'file' ? path.join(where.dir, 'sessions', `${sessionId}.jsonl`) : `${selfCommand()} log ${sessionId}${store}`}`,
      );
      // A run that started sub-agents is verified with them: --tree checks each child's log too.
      const tree = session.subAgentsRun > 0 ? ' --tree' : '';
      out(`  replay: ${selfCommand()} replay ${sessionId} --verify${tree}${store}`);
      out(`  view:   ${selfCommand()} viz ${sessionId} --format html --out session.html${store}`);
    }
    return result;
  } finally {
    await letGo(held, session);
  }
}

/** `--json` / `--output-format json|stream-json`: stdout is for a program, not a person. */
export function machineOutput(opts: RunOptions): boolean {
  return opts.json === true || opts.outputFormat === 'json' || opts.outputFormat === 'stream-json';
}

/** `--output-format stream-json`: each event of `session.stream()` as one line of JSON. */
async function printEvents(events: AsyncGenerator<SessionEvent, RunResult, undefined>): Promise<RunResult> {
  for (;;) {
    const next = await events.next();
    if (next.done) return next.value;
    printJson(next.value);
  }
}

/** A CLAUDE.md (or an import) that was not read, on stderr: the model did not see it. */
function memoryNotices(r: LogRecord): void {
  if (r.type !== 'memory.loaded') return;
  for (const w of r.data.warnings ?? []) err(`warning: ${w}`);
}

/**
 * The lease goes back with what the run left: parked (a paused run) or done. A run still open
 * in the log (this process failed mid-run) keeps it until it lapses: the session then counts as
 * interrupted and the next holder closes the run.
 */
async function letGo(lease: SessionLease | null, session: Session): Promise<void> {
  if (!lease) return;
  if (session.state.currentRun) return lease.abandon();
  const last = session.state.runs.last();
  await lease.release(
    last?.status === 'paused' ? 'parked' : 'done',
    last ? { runId: last.id, status: last.status, reason: last.reason } : undefined,
  );
}

/** What a hook had shown to the user (an error, its systemMessage, exit 2's stderr), on stderr. */
function hookNotices(r: LogRecord): void {
  if (r.type !== 'hook.decided' || r.data.hook === 'Budget') return;
  const d = r.data;
  if (d.decision === 'error') err(`warning: ${d.reason ?? `${d.hook} hook failed`}`);
  if (d.systemMessage) err(`${d.hook} hook: ${d.systemMessage}`);
}

/** Every built-in tool's name, `Task` included: what `--tools` may name. */
function builtinNames(): string[] {
  return [...builtinTools().map((t) => t.name), 'Task'];
}

/** The Task tool's agents for a run (its working directory's and `--agents-dir`'s). */
export async function runSubAgents(opts: RunOptions) {
  const cwd = path.resolve(opts.cwd ?? process.cwd());
  const maxTurns =
    opts.subagentMaxTurns !== undefined
      ? positiveInt('--subagent-max-turns', opts.subagentMaxTurns)
      : undefined;
  return subAgentsFor(
    cwd,
    opts.agentsDir ?? [],
    // A sub-agent chooses among the tools the run offers (`--tools`).
    (await offeredTools(builtinTools(), opts.tools, [], builtinNames())).map((t) => t.name),
    maxTurns,
    memorySources(opts),
  );
}

/** The tools' working directory: it must exist and be a directory before anything runs. */
export async function workingDirectory(flag: string | undefined): Promise<string> {
  const cwd = path.resolve(flag ?? process.cwd());
  const st = await stat(cwd).catch(() => undefined);
  if (!st) throw new UsageError(`--cwd ${cwd}: no such directory`, 'CWD_INVALID');
  if (!st.isDirectory()) throw new UsageError(`--cwd ${cwd}: not a directory`, 'CWD_INVALID');
  return cwd;
}

/** The run's hooks: every settings layer's and `--stop-hook`'s; hooks that are not valid are bad usage. */
function hookSettings(layers: Parameters<typeof runHooksFromLayers>[0], opts: RunOptions) {
  try {
    return runHooksFromLayers(layers, opts.stopHook);
  } catch (e) {
    if (e instanceof HookSettingsError) throw new UsageError(e.message, e.code);
    throw e;
  }
}

async function modelFrom(opts: RunOptions, requestAbort: () => void): Promise<ModelClient> {
  if (!opts.script) {
    // The SDK is loaded only by a run that talks to Anthropic.
    const { AnthropicModelClient } = await import('../model/anthropic.ts');
    return new AnthropicModelClient();
  }
  const file = path.resolve(opts.script);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new UsageError(`--script ${file}: cannot read: ${(e as Error).message}`, 'SCRIPT_UNREADABLE');
  }
  try {
    return new ScriptedModelClient(parseScriptText(text, file), { file, requestAbort, costOf });
  } catch (e) {
    if (e instanceof ScriptError) throw new UsageError(e.message, e.code);
    throw e;
  }
}

function assertModelAvailable(): void {
  if (!hasApiKey()) {
    throw new CommandFailed(
      'no model to talk to: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for any server that speaks the Messages API), ' +
        'pass --script <file.json> to answer from a script, or try the offline demo: reloop run --demo',
      EXIT.usage,
      'NO_MODEL',
    );
  }
}

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
