import type { Command } from 'commander';
import {
  CommandFailed,
  EXIT,
  type GlobalOptions,
  openStore,
  out,
  plural,
  printJson,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface ExportOtelFlags extends GlobalOptions {
  all?: boolean;
  endpoint?: string;
  out?: string;
  content?: boolean;
}

/**
 * `reloop export otel`: stored sessions as OpenTelemetry traces, after the fact — the spans a
 * live `run --otel` exports, with the same ids and the records' own times (docs/otel.md).
 */
export function registerExport(program: Command): void {
  const exp = program.command('export').description('export stored sessions to other tools');
  withCommonOptions(
    exp
      .command('otel [sessions...]')
      .description('export sessions as OpenTelemetry GenAI traces (OTLP), with the times they ran at')
      .option('--all', 'every session of the store')
      .option('--endpoint <url>', 'OTLP/HTTP endpoint (default: the OTEL_EXPORTER_OTLP_* variables)')
      .option('--out <file>', 'write OTLP/JSON to this file (one export request per line) instead')
      .option('--content', 'put the conversation on the spans too, redacted as the log is'),
  ).action(async (sessions: string[], opts: ExportOtelFlags) => {
    if (opts.all && sessions.length > 0) throw new UsageError('give session ids or --all, not both');
    if (!opts.all && sessions.length === 0) throw new UsageError('name the sessions to export, or --all');
    if (opts.endpoint !== undefined && opts.out !== undefined)
      throw new UsageError('--endpoint and --out are two destinations: give one');
    const { createOfflineExport, OtelExportError } = await import('../../otel/offline.ts');
    const { OtelConfigError } = await import('../../otel/provider.ts');
    const { packageVersion } = await import('../../lib/version.ts');
    let pipeline: ReturnType<typeof createOfflineExport>;
    try {
      pipeline = createOfflineExport({
        endpoint: opts.endpoint,
        outFile: opts.out,
        version: packageVersion(),
      });
    } catch (e) {
      if (e instanceof OtelConfigError) throw new UsageError(e.message, e.code);
      throw new CommandFailed(`--out ${opts.out}: ${(e as Error).message}`, EXIT.failed, 'OUT_FILE');
    }
    const store = await openStore(opts);
    try {
      const { exportSessions } = await import('../../otel/exportSessions.ts');
      const { defaultRedactor } = await import('../../lib/secrets.ts');
      let failure: unknown = null;
      const result = await exportSessions(store, opts.all ? 'all' : sessions, pipeline.sink, {
        checkpoint: () => pipeline.checkpoint(),
        ...(opts.content ? { content: { redactor: defaultRedactor() } } : {}),
      }).catch((e: unknown) => {
        failure = e;
        return null;
      });
      // What was translated goes out and the exporter is closed, even when reading failed.
      const spans = await pipeline.finish().catch((e: unknown) => {
        failure ??= e;
        return 0;
      });
      if (failure instanceof OtelExportError)
        throw new CommandFailed(
          `${failure.message} (${plural(failure.exported, 'span')} exported before)`,
          EXIT.failed,
          failure.code,
        );
      if (failure || !result) throw failure;
      if (opts.json) {
        printJson({ sessions: result.sessions, records: result.records, spans, to: pipeline.target });
      } else {
        out(
          `exported ${plural(result.sessions.length, 'session')} (${plural(result.records, 'record')}, ${plural(spans, 'span')}) to ${pipeline.target}`,
        );
      }
    } finally {
      await store.close();
    }
  });
}
