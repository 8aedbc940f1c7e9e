import { messageOf } from '../lib/errors.ts';
import { childEnv } from '../lib/secrets.ts';
import { runInProcessGroup } from '../tools/processGroup.ts';
import { hookLabel, isCommandHook } from './config.ts';
import { DEFAULT_TIMEOUT_S, type HookEvent, MATCHER_FIELD, timeoutMsOf } from './events.ts';
import { type HookAnswer, interpret, type RawAnswer } from './interpret.ts';
import { type CompiledMatcher, compileMatcher } from './matcher.ts';
import { parseCallbackAnswer, parseHookStdout } from './output.ts';
import type {
  CommandHookSpec,
  HookCallback,
  HookInput,
  HookMatcherGroup,
  HookRecord,
  HooksOption,
} from './types.ts';

/** A hook's stdout and stderr are each read up to this many characters (head and tail kept). */
const MAX_HOOK_OUTPUT_CHARS = 1_000_000;

/** What every hook of a session is told, and how its commands run. */
export interface HookRunContext {
  sessionId: string;
  /** The session's log (a file path for the file store; what another store offers otherwise). */
  transcriptPath: string;
  /** Where the commands run, and the `cwd` they are told. */
  cwd: string;
  permissionMode: string;
  /** `$CLAUDE_PROJECT_DIR`. */
  projectDir: string;
  /** Set inside a sub-agent: hooks get `agent_id` and `agent_type`. */
  agent?: { id: string; type: string };
  /** Secret variables the commands may see after all (src/lib/secrets.ts); none by default. */
  passEnv?: readonly string[];
  killGraceMs?: number;
  /** Monotonic milliseconds, for durations (the runtime's injected clock). */
  now: () => number;
}

interface Entry {
  group: HookMatcherGroup;
  hook: HookCallback | CommandHookSpec;
  matcher: CompiledMatcher;
  label: string;
}

/** One hook run: its record (logged as `hook.decided`) and its full answer. */
export interface HookRun {
  record: HookRecord;
  answer: HookAnswer;
}

export interface RunOptions {
  signal: AbortSignal;
  toolUseId?: string;
}

/**
 * Runs the hooks of one event as Claude Code does: the groups whose matcher matches, every hook
 * of them in parallel, an identical command (or the same callback) once. Answers come back in
 * the order the hooks are configured, so the records of one event are logged in a stable order.
 */
export class HookRunner {
  private readonly entries = new Map<HookEvent, Entry[]>();

  constructor(
    readonly hooks: HooksOption,
    readonly context: HookRunContext,
  ) {
    for (const [event, groups] of Object.entries(hooks) as [HookEvent, readonly HookMatcherGroup[]][]) {
      const list: Entry[] = [];
      for (const group of groups ?? []) {
        const matcher = compileMatcher(group.matcher);
        for (const hook of group.hooks) list.push({ group, hook, matcher, label: hookLabel(hook) });
      }
      if (list.length) this.entries.set(event, list);
    }
  }

  /** The same hooks, told they run inside a sub-agent (or with another session's context). */
  with(context: Partial<HookRunContext>): HookRunner {
    return new HookRunner(this.hooks, { ...this.context, ...context });
  }

  has(event: HookEvent): boolean {
    return this.entries.has(event);
  }

  /** The hooks that would run for this occurrence, duplicates removed. */
  matching(event: HookEvent, value: string | undefined): Entry[] {
    const all = this.entries.get(event);
    if (!all) return [];
    const matches = MATCHER_FIELD[event] === null ? all : all.filter((e) => e.matcher.test(value));
    const seen = new Set<unknown>();
    return matches.filter((e) => {
      const key = isCommandHook(e.hook) ? `command:${e.hook.command}` : e.hook;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
  }

  /** Runs the event's matching hooks with `fields` (the event's own input fields). */
  async run(event: HookEvent, fields: Record<string, unknown>, opts: RunOptions): Promise<HookRun[]> {
    const field = MATCHER_FIELD[event];
    const value = field === null ? undefined : fields[field];
    const entries = this.matching(event, typeof value === 'string' ? value : undefined);
    if (entries.length === 0) return [];
    const c = this.context;
    const input: HookInput = {
      session_id: c.sessionId,
      transcript_path: c.transcriptPath,
      cwd: c.cwd,
      permission_mode: c.permissionMode,
      hook_event_name: event,
      ...(c.agent ? { agent_id: c.agent.id, agent_type: c.agent.type } : {}),
      ...fields,
    };
    return Promise.all(entries.map((e) => this.runOne(event, e, input, opts)));
  }

  private async runOne(event: HookEvent, e: Entry, input: HookInput, opts: RunOptions): Promise<HookRun> {
    const t0 = this.context.now();
    const label = `${event} hook \`${e.label}\``;
    const raw = isCommandHook(e.hook)
      ? await this.runCommand(event, e.hook, label, input, opts.signal)
      : await runCallback(e.hook, e.group, event, label, input, opts);
    const answer = interpret(event, label, raw);
    const record: HookRecord = {
      hook: event,
      decision: answer.decision,
      ...(answer.reason !== undefined ? { reason: answer.reason } : {}),
      command: e.label,
      ...(e.group.matcher !== undefined ? { matcher: e.group.matcher } : {}),
      source: e.group.source ?? 'session',
      ...(opts.toolUseId !== undefined ? { toolUseId: opts.toolUseId } : {}),
      ...(answer.output !== undefined ? { output: answer.output } : {}),
      ...(answer.systemMessage !== undefined ? { systemMessage: answer.systemMessage } : {}),
      ...(answer.exitCode !== undefined ? { exitCode: answer.exitCode } : {}),
      durationMs: Math.max(0, Math.round(this.context.now() - t0)),
    };
    return { record, answer };
  }

  private async runCommand(
    event: HookEvent,
    hook: CommandHookSpec,
    label: string,
    input: HookInput,
    signal: AbortSignal,
  ): Promise<RawAnswer> {
    const c = this.context;
    const timeoutMs = timeoutMsOf(event, hook.timeout);
    const r = await runInProcessGroup(hook.command, {
      cwd: c.cwd,
      timeoutMs,
      signal,
      stdin: JSON.stringify(input),
      env: {
        ...childEnv(process.env, c.passEnv),
        CLAUDE_PROJECT_DIR: c.projectDir,
        RELOOP_PROJECT_DIR: c.projectDir,
      },
      maxOutputChars: MAX_HOOK_OUTPUT_CHARS,
      killGraceMs: c.killGraceMs,
    });
    const failure = r.spawnError
      ? `${label} could not be started: ${r.spawnError.message}`
      : r.timedOut
        ? `${label} did not finish within ${timeoutMs / 1000} s and was killed`
        : r.aborted
          ? `${label} was aborted`
          : r.exitCode === null
            ? `${label} was killed by signal ${r.signal ?? 'unknown'}`
            : undefined;
    return {
      exitCode: r.exitCode,
      ...(failure ? { failure } : {}),
      stderr: r.stderr,
      parsed: failure || r.exitCode !== 0 ? { kind: 'empty' } : parseHookStdout(r.stdout, event),
    };
  }
}

async function runCallback(
  hook: HookCallback,
  group: HookMatcherGroup,
  event: HookEvent,
  label: string,
  input: HookInput,
  opts: RunOptions,
): Promise<RawAnswer> {
  const seconds = group.timeout ?? DEFAULT_TIMEOUT_S;
  const timeout = AbortSignal.timeout(seconds * 1000);
  const signal = AbortSignal.any([opts.signal, timeout]);
  try {
    const late = new Promise<never>((_, reject) => {
      const fail = () =>
        reject(new Error(timeout.aborted ? `did not answer within ${seconds} s` : 'was aborted'));
      if (signal.aborted) fail();
      signal.addEventListener('abort', fail, { once: true });
    });
    const value = await Promise.race([Promise.resolve(hook(input, opts.toolUseId, { signal })), late]);
    return { stderr: '', parsed: parseCallbackAnswer(value, event) };
  } catch (e) {
    const failure = `${label} ${signal.aborted ? messageOf(e) : `threw: ${messageOf(e)}`}`;
    return { failure, stderr: '', parsed: { kind: 'empty' } };
  }
}
