/**
 * `reloop/otel`: reloop's records as OpenTelemetry GenAI traces (docs/otel.md). Kept out of the
 * main entry so the SDK loads only for those who trace.
 */
export { ContentEncoder } from './content.ts';
export { type ExportSessionsOptions, type ExportSessionsResult, exportSessions } from './exportSessions.ts';
export {
  chatSpanIdOf,
  LogIdGenerator,
  logIdGenerator,
  runSpanIdOf,
  toolSpanIdOf,
  traceIdOf,
} from './ids.ts';
export {
  createOfflineExport,
  JsonLinesFileExporter,
  type OfflineExport,
  type OfflineExportOptions,
  OtelExportError,
} from './offline.ts';
export {
  CountingExporter,
  createOtlpTracing,
  type ExportStats,
  flushDeadlineMs,
  OtelConfigError,
  type OtlpProtocol,
  type OtlpTracing,
  type OtlpTracingOptions,
  otlpExporter,
  otlpProtocol,
  reloopResource,
  tracesUrl,
} from './provider.ts';
export { ReadableSpanSink, readableSpanOf, type Scope } from './readableSpans.ts';
export { E as SPAN_EVENTS, R as RELOOP_ATTRIBUTES, SEMCONV_GENAI_VERSION } from './semconv.ts';
export { type SessionLookup, SessionTrace, type TraceOptions } from './sessionTrace.ts';
export {
  type Attributes,
  type AttributeValue,
  CollectingSink,
  type SpanData,
  type SpanEventData,
  type SpanKindName,
  type SpanSink,
} from './spanData.ts';
export { hrTimeOf, INSTRUMENTATION_SCOPE, TracerSink } from './tracerSink.ts';
export { TraceTree } from './traceTree.ts';
