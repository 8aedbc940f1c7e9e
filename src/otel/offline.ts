import { closeSync, openSync, writeSync } from 'node:fs';
import { type ExportResult, ExportResultCode, getNumberFromEnv } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import {
  BasicTracerProvider,
  type ReadableSpan,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { redactUrl } from '../store/redactUrl.ts';
import { logIdGenerator } from './ids.ts';
import { otlpExporter, otlpProtocol, reloopResource, tracesUrl } from './provider.ts';
import { TracerSink } from './tracerSink.ts';

/** The collector did not take a batch: the export stops there (the exporter already retried it). */
export class OtelExportError extends Error {
  readonly code = 'OTEL_EXPORT_FAILED';
  constructor(
    message: string,
    readonly exported: number,
  ) {
    super(message);
    this.name = 'OtelExportError';
  }
}

/** OTLP/JSON, one ExportTraceServiceRequest per line (what the Collector's otlpjsonfile receiver reads). */
export class JsonLinesFileExporter implements SpanExporter {
  private readonly fd: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, 'w');
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    try {
      const bytes = JsonTraceSerializer.serializeRequest(spans);
      if (bytes) writeSync(this.fd, bytes);
      writeSync(this.fd, '\n');
      done({ code: ExportResultCode.SUCCESS });
    } catch (e) {
      done({ code: ExportResultCode.FAILED, error: e as Error });
    }
  }

  async shutdown(): Promise<void> {
    closeSync(this.fd);
  }
}

/** Holds ended spans until the driver sends them, a batch at a time, waiting for each. */
class BufferingProcessor implements SpanProcessor {
  spans: ReadableSpan[] = [];
  onStart(): void {}
  onEnd(span: ReadableSpan): void {
    this.spans.push(span);
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

export interface OfflineExportOptions {
  /** OTLP endpoint (`--endpoint`; default the OTEL_EXPORTER_OTLP_* variables). */
  endpoint?: string;
  /** Write OTLP/JSON lines to this file instead. */
  outFile?: string;
  version?: string;
}

export interface OfflineExport {
  sink: TracerSink;
  /** Where the spans go, for messages. */
  target: string;
  /** Sends every full batch, waiting for each (the driver calls it as it reads). */
  checkpoint(): Promise<void>;
  /** Sends the rest and closes the exporter; the number of spans exported. */
  finish(): Promise<number>;
}

/**
 * The pipeline of `reloop export otel`: the SDK's tracer provider with the log's ids (ids.ts)
 * and the official OTLP exporter (or a file of OTLP/JSON), fed batch by batch with backpressure
 * so a log of any length goes through in bounded memory.
 */
export function createOfflineExport(opts: OfflineExportOptions): OfflineExport {
  const url = opts.outFile === undefined ? tracesUrl(opts.endpoint) : null;
  const exporter =
    opts.outFile !== undefined ? new JsonLinesFileExporter(opts.outFile) : otlpExporter(otlpProtocol(), url!);
  const target = opts.outFile ?? redactUrl(url!);
  const buffer = new BufferingProcessor();
  const provider = new BasicTracerProvider({
    resource: reloopResource({ version: opts.version }),
    idGenerator: logIdGenerator,
    spanLimits: { eventCountLimit: getNumberFromEnv('OTEL_SPAN_EVENT_COUNT_LIMIT') ?? 1_000_000 },
    spanProcessors: [buffer],
  });
  const batchSize = getNumberFromEnv('OTEL_BSP_MAX_EXPORT_BATCH_SIZE') ?? 512;
  let exported = 0;

  const send = (spans: ReadableSpan[]) =>
    new Promise<void>((resolve, reject) => {
      exporter.export(spans, (result) => {
        if (result.code === ExportResultCode.SUCCESS) {
          exported += spans.length;
          resolve();
        } else {
          const why = result.error?.message ?? 'export failed';
          reject(new OtelExportError(`could not export spans to ${target}: ${why}`, exported));
        }
      });
    });

  return {
    sink: new TracerSink(provider, opts.version),
    target,
    async checkpoint() {
      while (buffer.spans.length >= batchSize) await send(buffer.spans.splice(0, batchSize));
    },
    async finish() {
      try {
        await this.checkpoint();
        if (buffer.spans.length > 0) await send(buffer.spans.splice(0));
      } finally {
        await exporter.shutdown();
      }
      return exported;
    },
  };
}
