import { closeSync, openSync, writeSync } from 'node:fs';
import { type ExportResult, ExportResultCode, getNumberFromEnv } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { redactUrl } from '../store/redactUrl.ts';
import { otlpExporter, otlpProtocol, reloopResource, tracesUrl } from './provider.ts';
import { ReadableSpanSink } from './readableSpans.ts';
import type { SpanSink } from './spanData.ts';
import { INSTRUMENTATION_SCOPE } from './tracerSink.ts';

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

export interface OfflineExportOptions {
  /** OTLP endpoint (`--endpoint`; default the OTEL_EXPORTER_OTLP_* variables). */
  endpoint?: string;
  /** Write OTLP/JSON lines to this file instead. */
  outFile?: string;
  version?: string;
}

export interface OfflineExport {
  sink: SpanSink;
  /** Where the spans go, for messages. */
  target: string;
  /** Sends every full batch, waiting for each (the driver calls it as it reads). */
  checkpoint(): Promise<void>;
  /** Sends the rest and closes the exporter; the number of spans exported. */
  finish(): Promise<number>;
}

/**
 * The pipeline of `reloop export otel`: translated spans as ReadableSpans (readableSpans.ts) to
 * the official OTLP exporter (or a file of OTLP/JSON), batch by batch with backpressure, so a log
 * of any length goes through in bounded memory.
 */
export function createOfflineExport(opts: OfflineExportOptions): OfflineExport {
  const url = opts.outFile === undefined ? tracesUrl(opts.endpoint) : null;
  const exporter =
    opts.outFile !== undefined ? new JsonLinesFileExporter(opts.outFile) : otlpExporter(otlpProtocol(), url!);
  const target = opts.outFile ?? redactUrl(url!);
  const buffer: ReadableSpan[] = [];
  const sink = new ReadableSpanSink((span) => buffer.push(span), reloopResource({ version: opts.version }), {
    name: INSTRUMENTATION_SCOPE,
    version: opts.version,
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
    sink,
    target,
    async checkpoint() {
      while (buffer.length >= batchSize) await send(buffer.splice(0, batchSize));
    },
    async finish() {
      try {
        await this.checkpoint();
        if (buffer.length > 0) await send(buffer.splice(0));
      } finally {
        await exporter.shutdown();
      }
      return exported;
    },
  };
}
