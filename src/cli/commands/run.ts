import type { Command } from 'commander';
import { EXIT, type GlobalOptions, openStore, UsageError, withCommonOptions } from '../io.ts';

export interface RunOptions extends GlobalOptions {
  model?: string;
  script?: string;
  cwd?: string;
  maxTurns?: string;
  maxAttempts?: string;
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
      .option('--max-attempts <n>', 'attempts per model request, retries included (default 10)')
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
    // Everything the run needs (the runtime, the chart, the tools, a model client) loads here.
    if (opts.demo) {
      if (opts.resume || opts.script || opts.model) {
        throw new UsageError(
          '--demo runs its own scripted session: it takes no --resume, --script or --model',
        );
      }
      const { runDemo } = await import('../demo.ts');
      const result = await runDemo(opts);
      process.exitCode = result.status === 'completed' ? EXIT.ok : EXIT.failed;
      return;
    }
    if (!prompt && !opts.resume)
      throw new UsageError('a prompt is required (or --resume <session> to continue one)');
    const { prepareRun, runPrepared } = await import('../runSession.ts');
    // Every flag, the script, the settings and --cwd are checked before the store is opened, so
    // bad usage leaves no trace on disk.
    const prepared = await prepareRun(opts);
    const store = await openStore(opts, { create: !opts.resume });
    try {
      const result = await runPrepared(store, prompt ?? null, prepared, opts);
      process.exitCode = result.status === 'completed' ? EXIT.ok : EXIT.failed;
    } finally {
      await store.close();
    }
  });
}
