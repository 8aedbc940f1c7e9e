import type { Command } from 'commander';
import { EXIT, type GlobalOptions, openStore, UsageError, withCommonOptions } from '../io.ts';
import { withRunFlags } from '../runFlags.ts';
import type { SystemPromptFlags } from '../systemPromptFlags.ts';

export interface RunOptions extends GlobalOptions, SystemPromptFlags {
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
  settingSources?: string;
  addDir?: string[];
  allowedTools?: string[];
  disallowedTools?: string[];
  tools?: string;
  fallbackModel?: string;
  resume?: string;
  demo?: boolean;
  agentsDir: string[];
  subagentMaxTurns?: string;
  passEnv: string[];
  onAsk?: string;
  otel?: boolean;
  otelContent?: boolean;
  mcpConfig?: string[];
  strictMcpConfig?: boolean;
  acceptSetupChange?: boolean;
  outputFormat?: string;
}

export function registerRun(program: Command): void {
  withCommonOptions(
    withRunFlags(
      program
        .command('run [prompt]')
        .description('run the agent loop once on a prompt (Anthropic model, a script, or the offline demo)'),
    )
      .option('--demo', 'offline demo: fix a failing test in a scratch copy of a tiny project')
      .option('--resume <session>', 'continue a session (after a crash the interrupted run is closed first)')
      .option(
        '--accept-setup-change',
        'with --resume: continue even though the tools, system prompt, hooks, rules or MCP servers differ from those the session recorded',
      )
      .option(
        '--otel',
        'export OpenTelemetry traces while the run goes (OTEL_EXPORTER_OTLP_* variables; docs/otel.md)',
      )
      .option(
        '--output-format <format>',
        'text (default) | json (as --json) | stream-json (one JSON event per line, as session.stream() yields them)',
      )
      .option('--otel-content', 'with --otel: put the conversation on the spans too, redacted as the log is'),
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
      process.exitCode = exitCodeOf(result.status);
      return;
    }
    if (opts.outputFormat !== undefined && !['text', 'json', 'stream-json'].includes(opts.outputFormat))
      throw new UsageError(
        `--output-format must be text, json or stream-json, got ${JSON.stringify(opts.outputFormat)}`,
      );
    if (!prompt && !opts.resume)
      throw new UsageError('a prompt is required (or --resume <session> to continue one)');
    const { prepareRun, runPrepared } = await import('../runSession.ts');
    const { startCliTracing, stopCliTracing } = await import('../otel.ts');
    // Every flag, the script, the settings and --cwd are checked before the store is opened, so
    // bad usage leaves no trace on disk.
    const tracing = await startCliTracing(opts);
    const prepared = await prepareRun(
      opts,
      tracing ? { tracerProvider: tracing.tracerProvider, traceContent: tracing.traceContent } : {},
    );
    const store = await openStore(opts, { create: !opts.resume });
    try {
      const result = await runPrepared(store, prompt ?? null, prepared, opts);
      process.exitCode = exitCodeOf(result.status);
    } finally {
      await store.close();
      await stopCliTracing(tracing);
    }
  });
}

/** 0 completed, 3 paused (waiting for an approval), 1 any other end. */
function exitCodeOf(status: string): number {
  return status === 'completed' ? EXIT.ok : status === 'paused' ? EXIT.paused : EXIT.failed;
}
