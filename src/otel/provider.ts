import type { TracerProvider } from '@opentelemetry/api';
import { type ExportResult, ExportResultCode, getNumberFromEnv, getStringFromEnv } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { redactUrl } from '../store/redactUrl.ts';
import { logIdGenerator } from './ids.ts';
import { withDirectExport } from './readableSpans.ts';
import { INSTRUMENTATION_SCOPE } from './tracerSink.ts';

export type OtlpProtocol = 'http/protobuf' | 'http/json';

/** Bad OpenTelemetry configuration (an unknown protocol, an endpoint that is no URL). */
export class OtelConfigError extends Error {
  readonly code = 'OTEL_CONFIG';
  constructor(message: string) {
    super(message);
    this.name = 'OtelConfigError';
  }
}

/**
 * The protocol as the SDK reads it: OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, then
 * OTEL_EXPORTER_OTLP_PROTOCOL, default http/protobuf. reloop speaks both HTTP protocols; grpc is
 * refused by name rather than sent somewhere that cannot read it.
 */
export function otlpProtocol(): OtlpProtocol {
  const raw =
    getStringFromEnv('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ??
    getStringFromEnv('OTEL_EXPORTER_OTLP_PROTOCOL') ??
    'http/protobuf';
  if (raw === 'http/protobuf' || raw === 'http/json') return raw;
  throw new OtelConfigError(
    `OTEL_EXPORTER_OTLP_PROTOCOL ${JSON.stringify(raw)} is not supported: reloop exports http/protobuf or http/json`,
  );
}

/**
 * The URL spans go to: `--endpoint` (a base URL gets /v1/traces, a URL already ending in it is
 * used as it is), else the variables as the exporter reads them: the traces endpoint as given,
 * or the general endpoint plus /v1/traces, or the OTLP default.
 */
export function tracesUrl(endpoint?: string): string {
  const given = endpoint ?? getStringFromEnv('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  if (endpoint === undefined && given !== undefined)
    return checked(given, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = given ?? getStringFromEnv('OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return 'http://localhost:4318/v1/traces';
  const url = checked(base, endpoint !== undefined ? '--endpoint' : 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint !== undefined && /\/v1\/traces\/?$/.test(new URL(url).pathname)) return url;
  return `${url.endsWith('/') ? url : `${url}/`}v1/traces`;
}

function checked(url: string, what: string): string {
  try {
    return new URL(url).toString();
  } catch {
    throw new OtelConfigError(`${what} is not a URL: ${JSON.stringify(url)}`);
  }
}

/** The official OTLP/HTTP exporter for the protocol; headers, timeout and TLS come from the variables. */
export function otlpExporter(protocol: OtlpProtocol, url: string): SpanExporter {
  return protocol === 'http/json' ? new JsonExporter({ url }) : new ProtoExporter({ url });
}

/** How export went: spans handed to the exporter, spans it took, and the first failure. */
export interface ExportStats {
  ended: number;
  exported: number;
  failure: string | null;
  /** False when the flush was cut off by its deadline (an export may still be retrying). */
  settled: boolean;
}

/**
 * Counts what reaches the collector. A failed batch is dropped (the SDK's exporter has already
 * retried it); the first failure is reported once through `onFailure`.
 */
export class CountingExporter implements SpanExporter {
  exported = 0;
  failure: string | null = null;

  constructor(
    private readonly inner: SpanExporter,
    private readonly onFailure: (message: string) => void = () => undefined,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) this.exported += spans.length;
      else if (this.failure === null) {
        this.failure = result.error?.message ?? 'export failed';
        this.onFailure(this.failure);
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Counts the spans ended on a provider before its batch processor queues (or drops) them. */
class CountingProcessor implements SpanProcessor {
  ended = 0;
  constructor(private readonly inner: SpanProcessor) {}
  onStart(span: Parameters<SpanProcessor['onStart']>[0], ctx: Parameters<SpanProcessor['onStart']>[1]): void {
    this.inner.onStart(span, ctx);
  }
  onEnd(span: ReadableSpan): void {
    this.ended++;
    this.inner.onEnd(span);
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
}

export interface OtlpTracingOptions {
  /** `--endpoint`; default: the OTEL_EXPORTER_OTLP_* variables. */
  endpoint?: string;
  /** Resource attributes (the worker's identity); OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME win. */
  resource?: Record<string, string>;
  version?: string;
  /** Told once, on the first batch the collector did not take. */
  onFailure?: (message: string) => void;
}

export interface OtlpTracing {
  provider: TracerProvider;
  url: string;
  protocol: OtlpProtocol;
  stats(): ExportStats;
  /** Flushes what is queued, waiting at most `deadlineMs`; whatever is not exported by then is dropped. */
  shutdown(deadlineMs: number): Promise<ExportStats>;
}

/**
 * How long the last flush may take: the exporter's own timeout (OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
 * OTEL_EXPORTER_OTLP_TIMEOUT, default 10 s), at most 5 s — a dead collector must not hold the
 * command long after its run ended.
 */
export function flushDeadlineMs(): number {
  const timeout =
    getNumberFromEnv('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ??
    getNumberFromEnv('OTEL_EXPORTER_OTLP_TIMEOUT') ??
    10_000;
  return Math.max(0, Math.min(5_000, timeout));
}

/** Every transition is a span event: a long run has thousands, far past the SDK's default of 128. */
const DEFAULT_EVENT_LIMIT = 1_000_000;

/** A tracer provider exporting over OTLP/HTTP in the background, with the log's ids (ids.ts). */
export function createOtlpTracing(opts: OtlpTracingOptions = {}): OtlpTracing {
  const protocol = otlpProtocol();
  const url = tracesUrl(opts.endpoint);
  const exporter = new CountingExporter(otlpExporter(protocol, url), (m) =>
    opts.onFailure?.(`could not export spans to ${redactUrl(url)}: ${m}`),
  );
  // A bounded queue, exported in the background: a slow or dead collector costs the run nothing.
  const processor = new CountingProcessor(new BatchSpanProcessor(exporter));
  const resource = reloopResource(opts);
  const provider = new BasicTracerProvider({
    resource,
    idGenerator: logIdGenerator,
    spanLimits: { eventCountLimit: getNumberFromEnv('OTEL_SPAN_EVENT_COUNT_LIMIT') ?? DEFAULT_EVENT_LIMIT },
    spanProcessors: [processor],
  });
  // reloop's spans skip the tracer (readableSpans.ts) — unless a sampler is configured, which
  // only the tracer applies.
  if (getStringFromEnv('OTEL_TRACES_SAMPLER') === undefined) {
    withDirectExport(provider, {
      resource,
      scope: { name: INSTRUMENTATION_SCOPE, version: opts.version },
      onEnd: (span) => processor.onEnd(span),
    });
  }
  let settled = false;
  const stats = (): ExportStats => ({
    ended: processor.ended,
    exported: exporter.exported,
    failure: exporter.failure,
    settled,
  });
  return {
    provider,
    url,
    protocol,
    stats,
    async shutdown(deadlineMs) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, deadlineMs);
        timer.unref();
      });
      const flushed = provider.shutdown().then(
        () => {
          settled = true;
        },
        () => {
          settled = true;
        },
      );
      await Promise.race([flushed, deadline]);
      clearTimeout(timer);
      return stats();
    },
  };
}

export function reloopResource(opts: { resource?: Record<string, string>; version?: string }) {
  const ours = resourceFromAttributes({
    'service.name': 'reloop',
    ...(opts.version ? { 'service.version': opts.version } : {}),
    ...opts.resource,
  });
  return defaultResource()
    .merge(ours)
    .merge(detectResources({ detectors: [envDetector] }));
}
