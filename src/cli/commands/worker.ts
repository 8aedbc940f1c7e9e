import { hostname } from 'node:os';
import type { Command } from 'commander';
import {
  CommandFailed,
  EXIT,
  type GlobalOptions,
  intOption,
  openStore,
  out,
  plural,
  printJson,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface WorkerFlags extends GlobalOptions {
  concurrency?: string;
  exitWhenIdle?: boolean;
  leaseSeconds?: string;
  id?: string;
  otel?: boolean;
  otelContent?: boolean;
}

/**
 * `reloop worker`: claims queued runs of a PostgreSQL store and drives them. SIGTERM (or the
 * first Ctrl-C) drains: nothing more is claimed, the runs held finish or park. A second signal
 * aborts them and queues them again for another worker.
 */
export function registerWorker(program: Command): void {
  withCommonOptions(
    program
      .command('worker')
      .description('claim queued runs (reloop submit) of a PostgreSQL store and drive them')
      .option('--concurrency <n>', 'runs driven at once', '1')
      .option('--exit-when-idle', 'exit once nothing is queued or running anywhere')
      .option('--lease-seconds <n>', 'a claim lapses this long after its worker stops renewing it', '30')
      .option('--id <name>', 'worker name shown by `reloop sessions` (default: host:pid)')
      .option(
        '--otel',
        "export OpenTelemetry traces of the runs it drives, as the worker's (OTEL_* variables)",
      )
      .option('--otel-content', 'with --otel: put the conversation on the spans too, redacted as the log is'),
  ).action(async (opts: WorkerFlags) => {
    const concurrency = intOption('--concurrency', opts.concurrency) ?? 1;
    const leaseSeconds = intOption('--lease-seconds', opts.leaseSeconds) ?? 30;
    if (concurrency < 1 || leaseSeconds < 1)
      throw new UsageError('--concurrency and --lease-seconds must be ≥ 1');
    const id = opts.id ?? `${hostname()}:${process.pid}`;
    const { startCliTracing, stopCliTracing } = await import('../otel.ts');
    // The worker's identity is its spans' resource: which worker drove a run shows in the back-end.
    const tracing = await startCliTracing(opts, { 'service.instance.id': id, 'reloop.worker.id': id });
    const store = await openStore(opts);
    const { runQueueOf } = await import('../../store/runQueue.ts');
    const queue = runQueueOf(store);
    if (!queue) {
      await store.close();
      await stopCliTracing(tracing);
      throw new CommandFailed(
        'a worker needs a store with a run queue: --store postgres://… (or RELOOP_STORE)',
        EXIT.failed,
        'NO_RUN_QUEUE',
      );
    }
    const { runWorker } = await import('../../worker/worker.ts');
    const drain = new AbortController();
    const stop = new AbortController();
    const onSignal = () => (drain.signal.aborted ? stop.abort() : drain.abort());
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    if (!opts.json) out(`worker ${id}: concurrency ${concurrency}, lease ${leaseSeconds} s`);
    try {
      const { runs, left } = await runWorker({
        store,
        queue,
        id,
        concurrency,
        leaseMs: leaseSeconds * 1000,
        exitWhenIdle: opts.exitWhenIdle === true,
        drain: drain.signal,
        stop: stop.signal,
        ...(tracing ? { tracerProvider: tracing.tracerProvider, traceContent: tracing.traceContent } : {}),
        onEvent: (e) => {
          if (opts.json) return printJson({ worker: id, ...e });
          switch (e.type) {
            case 'claimed':
              return out(`claimed ${e.session}${e.resumed ? ' (resuming)' : ''}, attempt ${e.attempt}`);
            case 'finished':
              return out(`finished ${e.session}: ${e.status} (${e.reason})`);
            case 'failed':
              return out(`failed ${e.session}${e.started ? '' : ' (did not start)'}: ${e.message}`);
            case 'requeued':
              return out(`queued ${e.session} again: its run is still open after attempt ${e.attempt}`);
            case 'no-model':
              return out(`warning: ${e.message}`);
            case 'left':
              return out(e.message);
            case 'store-error':
              return out(`store unreachable: ${e.message}; trying again in ${e.retryMs} ms`);
            case 'store-ok':
              return out(`store reachable again after ${plural(e.failures, 'failed attempt')}`);
            case 'lost':
              return out(`lost ${e.session}: its lease ran out and another worker holds it`);
            case 'draining':
              return out(`draining: ${plural(e.holding, 'run')} to finish (signal again to abort them)`);
            case 'stopping':
              return out(`stopping: aborting ${plural(e.holding, 'run')}, queued again for another worker`);
          }
        },
      });
      if (!opts.json) out(`worker ${id}: ${plural(runs, 'run')}, exiting`);
      // Told to exit once idle with runs left it could not take: not done, and it says why.
      if (left > 0 && opts.exitWhenIdle)
        throw new CommandFailed(
          `${plural(left, 'queued run')} ${left === 1 ? 'needs' : 'need'} a model: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) for the worker; they stay queued`,
          EXIT.failed,
          'NO_MODEL',
        );
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      await store.close();
      await stopCliTracing(tracing);
    }
  });
}
