import type { TracerProvider } from '@opentelemetry/api';
import type { OtlpTracing } from '../otel/provider.ts';
import { err, UsageError } from './io.ts';

/** `--otel` of `run` and `worker`: a background OTLP exporter configured by the OTEL_* variables. */
export interface CliTracing {
  tracerProvider: TracerProvider;
  traceContent: boolean;
  tracing: OtlpTracing;
  /** Whether the one warning a failing collector costs has been printed. */
  warned: boolean;
}

export async function startCliTracing(
  flags: { otel?: boolean; otelContent?: boolean },
  resource: Record<string, string> = {},
): Promise<CliTracing | null> {
  if (!flags.otel && !flags.otelContent) return null;
  const { createOtlpTracing, OtelConfigError } = await import('../otel/provider.ts');
  const { packageVersion } = await import('../lib/version.ts');
  try {
    const t = { warned: false } as CliTracing;
    t.tracing = createOtlpTracing({
      resource,
      version: packageVersion(),
      // Said as soon as it happens (a long run should not wait to learn it), and only once.
      onFailure: (message) => {
        if (t.warned) return;
        t.warned = true;
        err(`warning: otel: ${message}; spans are dropped`);
      },
    });
    t.tracerProvider = t.tracing.provider;
    t.traceContent = flags.otelContent === true;
    return t;
  } catch (e) {
    if (e instanceof OtelConfigError) throw new UsageError(e.message, e.code);
    throw e;
  }
}

/** Flushes what is left (bounded: flushDeadlineMs) and says how many spans did not get out. */
export async function stopCliTracing(t: CliTracing | null): Promise<void> {
  if (!t) return;
  const { flushDeadlineMs } = await import('../otel/provider.ts');
  const { redactUrl } = await import('../store/redactUrl.ts');
  const stats = await t.tracing.shutdown(flushDeadlineMs());
  const dropped = stats.ended - stats.exported;
  if (dropped > 0) {
    const count = `${dropped} of ${stats.ended} spans dropped, not exported to ${redactUrl(t.tracing.url)}`;
    if (t.warned) err(`otel: ${count}`);
    else
      err(
        `warning: otel: ${count}${stats.failure ? ` (${stats.failure})` : ' (the collector did not answer in time)'}`,
      );
  }
  // An export still retrying past the deadline must not hold the process: once everything else
  // is done, this timer (which alone keeps nothing alive) ends it.
  if (!stats.settled) setTimeout(() => process.exit(), 100).unref();
}
