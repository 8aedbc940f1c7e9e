import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Command, Option } from 'commander';
import { SessionNotFoundError } from '../../store/errors.ts';
import type { LogRecord } from '../../store/records.ts';
import { type GlobalOptions, openStore, out, printJson, UsageError, withCommonOptions } from '../io.ts';

type Format = 'mermaid' | 'dot' | 'html';
const FORMATS: readonly Format[] = ['mermaid', 'dot', 'html'];

/**
 * Reads a whole session. A corrupt line or an unsupported schema version surfaces as the
 * store's typed error (it names the file and line); main prints it and exits 1.
 */
async function readSession(opts: GlobalOptions, session: string): Promise<LogRecord[]> {
  const store = await openStore(opts);
  try {
    // The same typed error as every other command: `reloop: no session with id "x" [SESSION_NOT_FOUND]`.
    if (!(await store.exists(session))) throw new SessionNotFoundError(session);
    const records: LogRecord[] = [];
    for await (const r of store.read(session)) records.push(r);
    return records;
  } finally {
    await store.close();
  }
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
      .option('--out <file>', 'write to this file instead of stdout'),
  ).action(async (session: string | undefined, opts: GlobalOptions & { format: Format; out?: string }) => {
    if (opts.format === 'html' && !session)
      throw new UsageError('--format html needs a session: reloop viz <session> --format html [--out file]');
    const records = session ? await readSession(opts, session) : null;
    const [{ chartOf }, { edgeCounts }] = await Promise.all([
      import('../../viz/edgeCatalog.ts'),
      import('../../viz/sessionView.ts'),
    ]);
    const chart = chartOf();
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
    // Each format loads only its own renderer: the viewer is for html alone.
    const text =
      opts.format === 'html'
        ? (await import('../../viz/html.ts')).renderViewerHtml(records ?? [])
        : opts.format === 'dot'
          ? (await import('../../viz/dot.ts')).toDot(chart, { counts, caption })
          : (await import('../../viz/mermaid.ts')).toMermaid(chart, { counts, caption });
    if (!opts.out) {
      process.stdout.write(text);
      return;
    }
    const file = path.resolve(opts.out);
    await writeFile(file, text);
    out(`wrote ${file} (${Math.ceil(Buffer.byteLength(text) / 1024)} kB)`);
  });
}
