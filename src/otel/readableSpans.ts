import { type HrTime, SpanKind, SpanStatusCode, TraceFlags } from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { SpanData, SpanSink } from './spanData.ts';
import { hrTimeOf } from './tracerSink.ts';

export interface Scope {
  name: string;
  version?: string;
}

/**
 * A translated span as the SDK's `ReadableSpan` — what a tracer provider hands its exporters —
 * made directly: after the fact nothing is in progress, so the spans go to the official OTLP
 * exporters without a tracer in between (half the cost of `export otel`). The fields are those
 * the SDK sets for the same span made live through the API (TracerSink), so both export the same
 * OTLP: `test/otel` compares them span for span.
 */
export function readableSpanOf(s: SpanData, resource: Resource, scope: Scope): ReadableSpan {
  const startTime = hrTimeOf(s.start);
  // As the SDK does: an end before the start (a clock stepped back) ends the span at its start.
  const endTime = s.end < s.start ? startTime : hrTimeOf(s.end);
  const context = { traceId: s.traceId, spanId: s.spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: s.name,
    kind: s.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(s.parentSpanId === null
      ? {}
      : {
          parentSpanContext: {
            traceId: s.traceId,
            spanId: s.parentSpanId,
            traceFlags: TraceFlags.SAMPLED,
            isRemote: false,
          },
        }),
    startTime,
    endTime,
    status:
      s.status.code === 'error'
        ? { code: SpanStatusCode.ERROR, message: s.status.message }
        : { code: SpanStatusCode.UNSET },
    attributes: s.attributes,
    links: [],
    events: s.events.map((e) => ({ name: e.name, time: hrTimeOf(e.time), attributes: e.attributes })),
    duration: difference(startTime, endTime),
    ended: true,
    resource,
    instrumentationScope: scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

function difference(a: HrTime, b: HrTime): HrTime {
  let seconds = b[0] - a[0];
  let nanos = b[1] - a[1];
  if (nanos < 0) {
    seconds -= 1;
    nanos += 1e9;
  }
  return [seconds, nanos];
}

/** Hands each ended span, as a ReadableSpan, to `onSpan` (an exporter's batch). */
export class ReadableSpanSink implements SpanSink {
  constructor(
    private readonly onSpan: (span: ReadableSpan) => void,
    private readonly resource: Resource,
    private readonly scope: Scope,
  ) {}

  end(span: SpanData): void {
    this.onSpan(readableSpanOf(span, this.resource, this.scope));
  }
}

/**
 * What a reloop-made provider (createOtlpTracing) carries so that live spans skip the tracer:
 * translated spans are complete when handed on, so they go to the provider's own batch processor
 * as ReadableSpans — the same objects `export otel` sends, for a fraction of the cost of making
 * them through the API. Absent on anyone else's provider (spans then go through its tracer).
 */
export interface DirectExport {
  resource: Resource;
  scope: Scope;
  onEnd(span: ReadableSpan): void;
}

const DIRECT = Symbol.for('reloop.otel.directExport');

export function withDirectExport<T extends object>(provider: T, direct: DirectExport): T {
  Object.defineProperty(provider, DIRECT, { value: direct });
  return provider;
}

export function directExportOf(provider: object): DirectExport | undefined {
  return (provider as { [DIRECT]?: DirectExport })[DIRECT];
}
