import { diag, type TracerProvider } from '@opentelemetry/api';
import { defaultRedactor } from '../lib/secrets.ts';
import { packageVersion } from '../lib/version.ts';
import type { LogRecord } from '../store/records.ts';
import { directExportOf, ReadableSpanSink } from './readableSpans.ts';
import type { SpanSink } from './spanData.ts';
import { TracerSink } from './tracerSink.ts';
import { TraceTree } from './traceTree.ts';

/** One tree per provider (and content setting): a session and the sub-agents it starts share it. */
const trees = new WeakMap<TracerProvider, Map<boolean, TraceTree>>();

function treeFor(provider: TracerProvider, content: boolean): TraceTree {
  let byContent = trees.get(provider);
  if (!byContent) {
    byContent = new Map();
    trees.set(provider, byContent);
  }
  let tree = byContent.get(content);
  if (!tree) {
    // reloop's own provider takes the translated spans as they are; anyone else's, through its tracer.
    const direct = directExportOf(provider);
    const sink: SpanSink = direct
      ? new ReadableSpanSink((span) => direct.onEnd(span), direct.resource, direct.scope)
      : new TracerSink(provider, packageVersion());
    tree = new TraceTree(sink, content ? { content: { redactor: defaultRedactor() } } : {});
    byContent.set(content, tree);
  }
  return tree;
}

/**
 * The record listener that traces a session live: its translator is primed with the records
 * written before (a resumed session), then fed each record as the writer adds it. Nothing here
 * may break the run: a failure to translate stops tracing this session, said once to the
 * OpenTelemetry diagnostic logger.
 */
export function liveTrace(
  provider: TracerProvider,
  session: string,
  prior: readonly LogRecord[],
  content = false,
): (record: LogRecord) => void {
  const trace = treeFor(provider, content).attach(session, prior);
  let broken = false;
  return (record) => {
    if (broken) return;
    try {
      trace.push(record);
    } catch (e) {
      broken = true;
      diag.error(`reloop: tracing of session ${session} stopped at seq ${record.seq}`, e);
    }
  };
}
