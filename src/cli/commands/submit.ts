import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import type { ModelClient } from '../../model/types.ts';
import { CommandFailed, EXIT, openStore, out, printJson, withCommonOptions } from '../io.ts';
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
    )
      .option('--resume <session>', 'queue the prompt as the next run of this session')
      .option(
        '--accept-setup-change',
        'with --resume: the worker runs it even though this setup differs from the one the session recorded',
      ),
  ).action(async (prompt: string, opts: RunOptions) => {
    const { RunSpecSchema } = await import('../../worker/runSpec.ts');
    const spec = RunSpecSchema.parse(await specOf(opts));
    // The job stores the spec as JSON: one that cannot be stored is refused before anything is written.
    const { assertJsonDepth } = await import('../../lib/jsonDepth.ts');
    assertJsonDepth(spec, 'the run spec');
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
      if (opts.resume) {
        await queue.enqueue(opts.resume, spec, prompt, await store.lastSeq(opts.resume));
        if (opts.json) printJson({ sessionId: opts.resume, status: 'queued' });
        else out(`queued ${opts.resume}`);
        return;
      }
      const { nanoidIds } = await import('../../runtime/determinism.ts');
      const { CURRENT_SCHEMA_VERSION } = await import('../../store/records.ts');
      const sessionId = nanoidIds('session');
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
      try {
        await queue.enqueue(sessionId, spec, prompt, 1);
      } catch (e) {
        // A session nobody will ever run is not left behind (it would list as idle, promptless).
        await store.remove?.(sessionId).catch(() => undefined);
        throw e;
      }
      if (opts.json) printJson({ sessionId, status: 'queued' });
      else out(`queued ${sessionId}`);
    } finally {
      await store.close();
    }
  });
}

async function mcpConfigTexts(values: readonly string[]): Promise<string[]> {
  return Promise.all(values.map((v) => (v.trim().startsWith('{') ? v : readFile(path.resolve(v), 'utf8'))));
}

/**
 * The run's flags as a spec a worker anywhere can run: absolute paths, the script's content.
 * Everything is checked first exactly as `reloop run` checks it (flags, `--cwd`, the script, the
 * settings file, allow/deny rules, agent files: exit 2, nothing queued); only the model is the
 * worker's, so no API key is needed here.
 */
async function specOf(opts: RunOptions): Promise<unknown> {
  const { prepareRun } = await import('../runSession.ts');
  const { splitToolList } = await import('../../runtime/permissionSetup.ts');
  const agentsDir = (opts.agentsDir ?? []).map((d) => path.resolve(d));
  const workersModel = { model: {} as ModelClient };
  const { cwd, settings } = await prepareRun(
    { ...opts, agentsDir },
    { ...(opts.script ? {} : workersModel), askUser: undefined },
  );
  const script = opts.script
    ? {
        file: path.resolve(opts.script),
        content: JSON.parse(await readFile(path.resolve(opts.script), 'utf8')),
      }
    : undefined;
  const subagentMaxTurns = opts.subagentMaxTurns !== undefined ? Number(opts.subagentMaxTurns) : undefined;
  return {
    ...(settings.model ? { model: settings.model } : {}),
    ...(script ? { script } : {}),
    cwd,
    ...(settings.maxTurns !== undefined ? { maxTurns: settings.maxTurns } : {}),
    ...(settings.maxTransportAttempts !== undefined ? { maxAttempts: settings.maxTransportAttempts } : {}),
    ...(subagentMaxTurns !== undefined ? { subagentMaxTurns } : {}),
    ...(agentsDir.length > 0 ? { agentsDir } : {}),
    ...(settings.maxBudgetUsd !== undefined ? { maxBudgetUsd: settings.maxBudgetUsd } : {}),
    ...(settings.fallbackModel ? { fallbackModel: settings.fallbackModel } : {}),
    // The prompt's text, files read here: a worker may be on another machine.
    ...(settings.system !== undefined ? { systemPrompt: settings.system } : {}),
    ...(opts.permissionMode !== undefined ? { permissionMode: opts.permissionMode } : {}),
    // The worker reads these settings files itself (its home, the cwd), as `run` reads them here.
    settingSources: settingSourcesOf(opts),
    ...(opts.addDir?.length ? { addDir: opts.addDir.map((d) => path.resolve(d)) } : {}),
    // --allowedTools / --disallowedTools are --allow / --deny by Claude Code's names.
    allow: [...opts.allow, ...splitToolList(opts.allowedTools ?? [])],
    deny: [...opts.deny, ...splitToolList(opts.disallowedTools ?? [])],
    ...(opts.tools !== undefined ? { tools: opts.tools } : {}),
    stopHook: opts.stopHook,
    passEnv: opts.passEnv ?? [],
    // The MCP configurations as text (a worker may be on another machine), files read here.
    ...(opts.mcpConfig?.length ? { mcpConfig: await mcpConfigTexts(opts.mcpConfig) } : {}),
    ...(opts.strictMcpConfig ? { strictMcpConfig: true } : {}),
    ...(opts.acceptSetupChange ? { acceptSetupChange: true } : {}),
    onAsk: parseOnAsk(opts.onAsk),
    ...(opts.settings ? { settings: path.resolve(opts.settings) } : {}),
  };
}

function settingSourcesOf(opts: RunOptions): string[] {
  return (opts.settingSources ?? 'user,project,local')
    .split(',')
    .map((x) => x.trim())
    .filter((x) => x !== '');
}
