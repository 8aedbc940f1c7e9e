/**
 * A span as the translator makes it from records: plain data, no OpenTelemetry object. Times
 * are the records' own (`at`, ms since the epoch); ids are derived from the log (ids.ts), so the
 * same records give the same spans wherever and whenever they are translated.
 */
export type AttributeValue = string | number | boolean | string[];
export type Attributes = Record<string, AttributeValue>;

export interface SpanEventData {
  name: string;
  /** ms since the epoch */
  time: number;
  attributes: Attributes;
}

export type SpanKindName = 'internal' | 'client';

export interface SpanData {
  traceId: string;
  spanId: string;
  /** null for the root of a trace. */
  parentSpanId: string | null;
  name: string;
  kind: SpanKindName;
  start: number;
  end: number;
  attributes: Attributes;
  events: SpanEventData[];
  /** `error` when the operation ended in an error (its `error.type` says which). */
  status: { code: 'unset' | 'error'; message?: string };
}

/**
 * Where spans go. `start` (optional) when a span's first record arrives, `end` when its closing
 * record does; a span whose start was not seen (it began before the sink was attached) only ends.
 */
export interface SpanSink {
  start?(span: SpanData): void;
  end(span: SpanData): void;
}

/** Collects ended spans (tests, benchmarks). */
export class CollectingSink implements SpanSink {
  readonly spans: SpanData[] = [];
  end(span: SpanData): void {
    this.spans.push(span);
  }
}
