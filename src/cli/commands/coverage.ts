import type { Command } from 'commander';
import type { CoverageDetail } from '../../coverage/coverage.ts';
import type { LogRecord } from '../../store/records.ts';
import {
  CommandFailed,
  type GlobalOptions,
  openStore,
  out,
  printJson,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface CoverageOptions extends GlobalOptions {
  min?: string;
  tools?: boolean;
}

export function parseMin(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value.replace(/%$/, ''));
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100) {
    throw new UsageError(`--min must be a percentage between 0 and 100, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** Read errors (a corrupt line, a wrong schema version, a missing file) end the command with their own words. */
async function collect(logs: string[], opts: CoverageOptions): Promise<CoverageDetail> {
  const useStore = logs.length === 0 || opts.store !== undefined;
  const { countAll, readLogTree, readStoreRecords } = await import('../../coverage/coverage.ts');
  const store = useStore ? await openStore(opts) : undefined;
  try {
    const sources: AsyncIterable<LogRecord>[] = logs.length > 0 ? [readLogTree(logs)] : [];
    if (store) sources.push(readStoreRecords(store));
    return await countAll(sources);
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const file = (e as { path?: unknown }).path;
    if (code === 'ENOENT' && typeof file === 'string')
      throw new CommandFailed(`no such log file: ${file}`, 1, 'ENOENT');
    throw new CommandFailed(
      e instanceof Error ? e.message : String(e),
      1,
      typeof code === 'string' ? code : undefined,
    );
  } finally {
    await store?.close();
  }
}

export function registerCoverage(program: Command): void {
  withCommonOptions(
    program
      .command('coverage')
      .description(
        'reasons and chart edges covered by logs: every session of the store, or the given .jsonl files',
      )
      .argument(
        '[logs...]',
        '.jsonl session logs to read, with the sub-agent logs beside them (then the store is read only if --store is given)',
      )
      .option('--min <percent>', 'exit 1 when reason or edge coverage is below this percentage')
      .option('--tools', "also print each tool's calls per outcome (ok, error, denied, parked, …)"),
  ).action(async (logs: string[], opts: CoverageOptions) => {
    const min = parseMin(opts.min);
    const detail = await collect(logs, opts);
    const { belowMinimum, formatCoverage } = await import('../../coverage/coverage.ts');
    if (opts.json) printJson(detail.report);
    else {
      for (const line of formatCoverage(detail)) out(line);
      if (opts.tools) {
        const { formatToolOutcomes } = await import('../../coverage/toolOutcomes.ts');
        out('', 'tool outcomes:');
        for (const line of formatToolOutcomes(detail.report.tools)) out(`  ${line}`);
      }
    }
    if (min === undefined) return;
    const below = belowMinimum(detail.report, min);
    if (below.length > 0) throw new CommandFailed(below.join('\n'), 1, 'BELOW_MINIMUM');
  });
}
