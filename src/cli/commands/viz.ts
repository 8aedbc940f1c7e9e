import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Command, Option } from 'commander';
import type { LogRecord } from '../../store/records.ts';
import type { EventStore } from '../../store/types.ts';
import {
  type GlobalOptions,
  openStore,
  out,
  printJson,
  UsageError,
  withCommonOptions,
  writeDocument,
} from '../io.ts';

type Format = 'mermaid' | 'dot' | 'html';
const FORMATS: readonly Format[] = ['mermaid', 'dot', 'html'];
type View = 'overview' | 'full';
const VIEWS: readonly View[] = ['overview', 'full'];

/**
 * Reads a whole session. A corrupt line or an unsupported schema version surfaces as the
 * store's typed error (it names the file and line); main prints it and exits 1.
 */
async function readSession(store: EventStore, session: string): Promise<LogRecord[]> {
  const { SessionNotFoundError } = await import('../../store/errors.ts');
  // The same typed error as every other command: `reloop: no session with id "x" [SESSION_NOT_FOUND]`.
  if (!(await store.exists(session))) throw new SessionNotFoundError(session);
  const records: LogRecord[] = [];
  for await (const r of store.read(session)) records.push(r);
  return records;
}

/** A fork's page holds its source too, when the store still has it (for the fork diff). */
async function sourceOf(
  store: EventStore,
  records: readonly LogRecord[],
): Promise<{ records: LogRecord[]; role: 'source' }[]> {
  const from = records.find((r) => r.type === 'session.created')?.data.forkedFrom;
  if (!from || !(await store.exists(from.session))) return [];
  return [{ records: await readSession(store, from.session), role: 'source' }];
}

/** A session's page holds its sub-agents too (all the tree below it): Task calls link to them. */
async function childrenOf(
  store: EventStore,
  session: string,
  records: LogRecord[],
): Promise<{ records: LogRecord[]; role: 'child' }[]> {
  const { sessionTree } = await import('../../replay/sessionTree.ts');
  const tree = await sessionTree(store, session, records);
  return tree.slice(1).map((m) => ({ records: m.records, role: 'child' as const }));
}

/** The self-contained viewer page of a session, with its fork source and sub-agents (`viz --format html`, chat's `/viz`). */
export async function viewerPage(store: EventStore, session: string): Promise<string> {
  const records = await readSession(store, session);
  const related = [...(await sourceOf(store, records)), ...(await childrenOf(store, session, records))];
  const { renderViewerHtml } = await import('../../viz/html.ts');
  return renderViewerHtml(records, { related });
}

export function registerViz(program: Command): void {
  withCommonOptions(
    program
      .command('viz [session]')
      .description(
        'draw the query-loop chart (Mermaid or DOT); with a session, mark the edges it took; ' +
          '--format html writes the self-contained session viewer',
      )
      .addOption(new Option('--format <format>', 'output format').choices(FORMATS).default('mermaid'))
      .addOption(
        new Option('--view <view>', 'overview: failure edges folded per terminal; full: every edge')
          .choices(VIEWS)
          .default('overview'),
      )
      .option('--out <file>', 'write to this file instead of stdout'),
  ).action(
    async (
      session: string | undefined,
      opts: GlobalOptions & { format: Format; view: View; out?: string },
    ) => {
      if (opts.format === 'html' && !session)
        throw new UsageError(
          '--format html needs a session: reloop viz <session> --format html [--out file]',
        );
      // The chart pulls in xstate, the viewer much more: loaded only when this command runs.
      const { chartOf } = await import('../../viz/edgeCatalog.ts');
      const { edgeCounts } = await import('../../viz/sessionView.ts');
      const chart = chartOf();
      let records: LogRecord[] | null = null;
      let related: { records: LogRecord[]; role: 'source' | 'child' }[] = [];
      if (session) {
        const store = await openStore(opts);
        try {
          records = await readSession(store, session);
          if (opts.format === 'html' && !opts.json)
            related = [...(await sourceOf(store, records)), ...(await childrenOf(store, session, records))];
        } finally {
          await store.close();
        }
      }
      const counts = records ? edgeCounts(records) : undefined;
      if (opts.json) {
        // The edge catalog, with the session's counts when one is given: for scripts and tools.
        printJson({
          chart: chart.id,
          session: session ?? null,
          states: chart.states,
          edges: chart.edges.map((e) => ({ ...e, ...(counts ? { count: counts.get(e.key) ?? 0 } : {}) })),
        });
        return;
      }
      const caption = session ? `${chart.id}: session ${session}` : chart.id;
      let text: string;
      if (opts.format === 'html') {
        const { renderViewerHtml } = await import('../../viz/html.ts');
        text = renderViewerHtml(records ?? [], { related });
      } else if (opts.format === 'dot') {
        const { toDot } = await import('../../viz/dot.ts');
        text = toDot(chart, { counts, caption, view: opts.view });
      } else {
        const { toMermaid } = await import('../../viz/mermaid.ts');
        text = toMermaid(chart, { counts, caption, view: opts.view });
      }
      if (!opts.out) {
        writeDocument(text);
        return;
      }
      const file = path.resolve(opts.out);
      await writeFile(file, text);
      out(`wrote ${file} (${Math.ceil(Buffer.byteLength(text) / 1024)} kB)`);
    },
  );
}
