import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { CommandFailed, EXIT, openStore, out, printJson, UsageError, withCommonOptions } from '../io.ts';
import { parseOnAsk, withRunFlags } from '../runFlags.ts';
import type { RunOptions } from './run.ts';

/**
 * `reloop submit [run flags] "prompt"`: creates a session (or takes `--resume <session>`) and
 * queues its run for a worker (`reloop worker`). Needs a store with a run queue (PostgreSQL).
 */
export function registerSubmit(program: Command): void {
  withCommonOptions(
    withRunFlags(
      program
        .command('submit <prompt>')
        .description('queue a run for a worker (PostgreSQL store): same flags as run; prints the session id'),
    ).option('--resume <session>', 'queue the prompt as the next run of this session'),
  ).action(async (prompt: string, opts: RunOptions) => {
    const { RunSpecSchema } = await import('../../worker/runSpec.ts');
    const spec = RunSpecSchema.parse(await specOf(opts));
    const store = await openStore(opts);
    try {
      const { runQueueOf } = await import('../../store/runQueue.ts');
      const queue = runQueueOf(store);
      if (!queue) {
        throw new CommandFailed(
          'submit needs a store with a run queue: --store postgres://… (or RELOOP_STORE); a file store runs with `reloop run`',
          EXIT.failed,
          'NO_RUN_QUEUE',
        );
      }
      let sessionId = opts.resume;
      let afterSeq = 0;
      if (sessionId) {
        afterSeq = await store.lastSeq(sessionId);
      } else {
        const { nanoidIds } = await import('../../runtime/determinism.ts');
        const { CURRENT_SCHEMA_VERSION } = await import('../../store/records.ts');
        sessionId = nanoidIds('session');
        await store.append(
          sessionId,
          [
            {
              v: CURRENT_SCHEMA_VERSION,
              seq: 1,
              at: Date.now(),
              session: sessionId,
              run: null,
              type: 'session.created',
              data: { cwd: spec.cwd },
            },
          ],
          { expectedSeq: 0 },
        );
        afterSeq = 1;
      }
      await queue.enqueue(sessionId, spec, prompt, afterSeq);
      if (opts.json) printJson({ sessionId, status: 'queued' });
      else out(`queued ${sessionId}`);
    } finally {
      await store.close();
    }
  });
}

/** The run's flags as a spec a worker anywhere can run: absolute paths, the script's content. */
async function specOf(opts: RunOptions): Promise<unknown> {
  const { PermissionModeSchema } = await import('../../tools/permissions/index.ts');
  const mode = PermissionModeSchema.safeParse(opts.permissionMode ?? 'default');
  if (!mode.success)
    throw new UsageError(`--permission-mode must be one of ${PermissionModeSchema.options.join(', ')}`);
  const number = (name: string, raw: string | undefined, int: boolean) => {
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0 || (int && !Number.isInteger(n)))
      throw new UsageError(
        `${name} must be a ${int ? 'whole number ≥ 1' : 'number > 0'}, got ${JSON.stringify(raw)}`,
      );
    return n;
  };
  let script: { file: string; content: unknown } | undefined;
  if (opts.script) {
    const file = path.resolve(opts.script);
    const { parseScriptText } = await import('../../model/script.ts');
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new UsageError(`cannot read the script ${file}: ${(e as Error).message}`);
    }
    parseScriptText(text, file);
    script = { file, content: JSON.parse(text) };
  }
  // The agent files are checked here, as `run` checks them: a bad one is refused before anything
  // is queued (the worker reads them again, from the same absolute paths).
  const { runSubAgents, workingDirectory } = await import('../runSession.ts');
  const cwd = await workingDirectory(opts.cwd);
  const agentsDir = (opts.agentsDir ?? []).map((d) => path.resolve(d));
  await runSubAgents({ ...opts, cwd, agentsDir });
  return {
    ...(opts.model ? { model: opts.model } : {}),
    ...(script ? { script } : {}),
    cwd,
    ...(opts.maxTurns !== undefined ? { maxTurns: number('--max-turns', opts.maxTurns, true) } : {}),
    ...(opts.maxAttempts !== undefined
      ? { maxAttempts: number('--max-attempts', opts.maxAttempts, true) }
      : {}),
    ...(opts.subagentMaxTurns !== undefined
      ? { subagentMaxTurns: number('--subagent-max-turns', opts.subagentMaxTurns, true) }
      : {}),
    ...(agentsDir.length > 0 ? { agentsDir } : {}),
    ...(opts.maxBudgetUsd !== undefined
      ? { maxBudgetUsd: number('--max-budget-usd', opts.maxBudgetUsd, false) }
      : {}),
    ...(opts.fallbackModel ? { fallbackModel: opts.fallbackModel } : {}),
    permissionMode: mode.data,
    allow: opts.allow,
    deny: opts.deny,
    stopHook: opts.stopHook,
    passEnv: opts.passEnv ?? [],
    onAsk: parseOnAsk(opts.onAsk),
    ...(opts.settings ? { settings: path.resolve(opts.settings) } : {}),
  };
}
