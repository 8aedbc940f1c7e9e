import { HookRunner } from '../hooks/runner.ts';
import type { HookRecord, HooksOption } from '../hooks/types.ts';
import type { EventStore } from '../store/types.ts';
import type { ToolHooks } from '../tools/types.ts';
import type { Clock } from './determinism.ts';
import { type PendingPromptHooks, type RunHooks, runHooks } from './runHooks.ts';
import type { SessionWriter } from './sessionWriter.ts';
import { toolHooksFor } from './toolHooks.ts';

/** How the session's hooks run and what they are told, besides the hooks themselves. */
export interface HookOptions {
  /** `permission_mode` in every hook's input (default `default`): the mode the policy runs in. */
  permissionMode?: string;
  /** `transcript_path`: default the store's location of the log (`store:<id>` when it has none). */
  transcriptPath?: (sessionId: string) => string;
  /** `$CLAUDE_PROJECT_DIR` (default: the session's cwd). */
  projectDir?: string;
  /** Secret variables command hooks may see after all (src/lib/secrets.ts). */
  passEnv?: readonly string[];
  /** SIGTERM → SIGKILL grace for a command hook killed at its timeout. */
  killGraceMs?: number;
}

/** A sub-agent's link for its hooks: the session they report as theirs, and the agent's name. */
export interface SubAgentIdentity {
  parent: string;
  agent: string;
}

export interface SessionHookSetup {
  store: EventStore;
  hooks?: HooksOption;
  hookOptions?: HookOptions;
  cwd: string;
  clock: Clock;
  subAgent?: SubAgentIdentity;
}

export function transcriptPathOf(s: SessionHookSetup, sessionId: string): string {
  return s.hookOptions?.transcriptPath?.(sessionId) ?? s.store.locate?.(sessionId) ?? `store:${sessionId}`;
}

/**
 * The session's hook runner, or null when it has no hooks. Inside a sub-agent the hooks are told
 * the parent's session and log (as Claude Code tells its subagents' hooks the main session's),
 * with `agent_id` (this session) and `agent_type`.
 */
export function hookRunnerFor(s: SessionHookSetup, sessionId: string): HookRunner | null {
  const hooks = s.hooks ?? {};
  if (!Object.values(hooks).some((g) => g?.length)) return null;
  const clock = s.clock;
  const now = clock.monotonicNow ? clock.monotonicNow.bind(clock) : () => performance.now();
  const reported = s.subAgent?.parent ?? sessionId;
  return new HookRunner(hooks, {
    sessionId: reported,
    transcriptPath: transcriptPathOf(s, reported),
    cwd: s.cwd,
    permissionMode: s.hookOptions?.permissionMode ?? 'default',
    projectDir: s.hookOptions?.projectDir ?? s.cwd,
    ...(s.subAgent ? { agent: { id: sessionId, type: s.subAgent.agent } } : {}),
    ...(s.hookOptions?.passEnv ? { passEnv: s.hookOptions.passEnv } : {}),
    ...(s.hookOptions?.killGraceMs !== undefined ? { killGraceMs: s.hookOptions.killGraceMs } : {}),
    now,
  });
}

/** What one run gets: its tool hooks and its other hooks (none when the session has none). */
export function hooksForRun(args: {
  runner: HookRunner | null;
  legacyToolHooks: ToolHooks | undefined;
  writer: SessionWriter;
  runId: string;
  clock: Clock;
  signal: AbortSignal;
  pending: PendingPromptHooks;
  setup: SessionHookSetup;
}): { toolHooks: ToolHooks | undefined; hooks: RunHooks | undefined } {
  const { runner, writer, clock } = args;
  const now = clock.monotonicNow ? clock.monotonicNow.bind(clock) : () => performance.now();
  const toolHooks = toolHooksFor(runner, args.legacyToolHooks, args.signal, now);
  if (!runner) return { toolHooks, hooks: undefined };
  const sub = args.setup.subAgent;
  const hooks = runHooks({
    runner,
    rec: (data) => writer.add({ type: 'hook.decided', run: args.runId, at: clock.now(), data }),
    commit: () => writer.commit(),
    signal: args.signal,
    pending: args.pending,
    ...(sub
      ? {
          agent: {
            id: writer.sessionId,
            type: sub.agent,
            transcriptPath: transcriptPathOf(args.setup, writer.sessionId),
          },
        }
      : {}),
  });
  return { toolHooks, hooks };
}

/**
 * SessionEnd: the session object is done (the CLI calls it as it exits). Its records are logged
 * between runs (`run` null): no run is in progress, and nothing the chart does depends on them.
 */
export async function endSession(
  runner: HookRunner | null,
  writer: SessionWriter,
  clock: Clock,
  reason: string,
): Promise<HookRecord[]> {
  if (!runner?.has('SessionEnd')) return [];
  await writer.commit();
  const runs = await runner.run('SessionEnd', { reason }, { signal: new AbortController().signal });
  for (const r of runs) writer.add({ type: 'hook.decided', run: null, at: clock.now(), data: r.record });
  await writer.commit();
  return runs.map((r) => r.record);
}
