import {
  type Context,
  type HrTime,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';
import { type LogIdGenerator, logIdGenerator } from './ids.ts';
import type { SpanData, SpanSink } from './spanData.ts';

export const INSTRUMENTATION_SCOPE = 'reloop';

/** ms since the epoch as OpenTelemetry's [seconds, nanoseconds]: never read as a performance time. */
export function hrTimeOf(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

/**
 * Hands translated spans to a TracerProvider through the OpenTelemetry API: started at their
 * first record with the record's time, events and final attributes added and ended at the
 * closing one, with the closing record's time. Parents are the live spans when this sink started
 * them, otherwise the parent's derived context; with reloop's id generator (ids.ts) the SDK gives
 * each span the derived id, so live and after-the-fact spans are the same spans.
 */
export class TracerSink implements SpanSink {
  private readonly tracer: Tracer;
  private readonly ids: LogIdGenerator;
  private readonly open = new Map<string, Span>();

  constructor(provider: TracerProvider, version?: string, ids: LogIdGenerator = logIdGenerator) {
    this.tracer = provider.getTracer(INSTRUMENTATION_SCOPE, version);
    this.ids = ids;
  }

  start(s: SpanData): void {
    this.open.set(s.spanId, this.begin(s));
  }

  end(s: SpanData): void {
    let span = this.open.get(s.spanId);
    if (span) {
      this.open.delete(s.spanId);
      // Names and attributes learnt after the start (a call's tool name, the response's usage).
      span.updateName(s.name);
      span.setAttributes(s.attributes);
    } else {
      span = this.begin(s);
    }
    for (const e of s.events) span.addEvent(e.name, e.attributes, hrTimeOf(e.time));
    if (s.status.code === 'error') span.setStatus({ code: SpanStatusCode.ERROR, message: s.status.message });
    span.end(hrTimeOf(s.end));
  }

  private begin(s: SpanData): Span {
    this.ids.claim(s.traceId, s.spanId);
    try {
      return this.tracer.startSpan(
        s.name,
        {
          kind: s.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
          startTime: hrTimeOf(s.start),
          attributes: s.attributes,
          root: s.parentSpanId === null,
        },
        this.parentContext(s),
      );
    } finally {
      this.ids.release();
    }
  }

  private parentContext(s: SpanData): Context {
    if (s.parentSpanId === null) return ROOT_CONTEXT;
    const live = this.open.get(s.parentSpanId);
    if (live) return trace.setSpan(ROOT_CONTEXT, live);
    return trace.setSpanContext(ROOT_CONTEXT, {
      traceId: s.traceId,
      spanId: s.parentSpanId,
      traceFlags: TraceFlags.SAMPLED,
      isRemote: false,
    });
  }
}
