import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { RerunReport } from '../replay/rerun.ts';
import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import type { RunOptions } from './commands/run.ts';
import { out, UsageError } from './io.ts';

/** `replay --rerun`'s `--tools`: `recorded` / `live` choose the mode; anything else is run's own `--tools` list. */
export function rerunToolMode(opts: RunOptions): { mode: 'live' | 'recorded'; opts: RunOptions } {
  if (opts.tools === 'recorded' || opts.tools === 'live') {
    const { tools: _t, ...rest } = opts;
    return { mode: opts.tools, opts: rest as RunOptions };
  }
  return { mode: 'live', opts };
}

/**
 * Reruns one session of the store with the setup `reloop run` would use now (its flags given
 * here, settings files as they are today, in the session's cwd or `--cwd`). Built-in tools that
 * run live run in a scratch copy of that directory, never in place; `--tools recorded` answers
 * them from the log (and uses the directory itself for rules and hooks).
 */
export async function rerunStored(
  store: EventStore,
  session: string,
  given: RunOptions,
): Promise<RerunReport> {
  const { mode, opts } = rerunToolMode(given);
  const records: LogRecord[] = [];
  for await (const r of store.read(session)) records.push(r);
  const first = records[0];
  const source = path.resolve(
    opts.cwd ?? (first?.type === 'session.created' ? first.data.cwd : undefined) ?? process.cwd(),
  );
  let scratch: string | null = null;
  try {
    let cwd = source;
    if (mode === 'live') {
      scratch = await mkdtemp(path.join(tmpdir(), 'reloop-rerun-'));
      await cp(source, scratch, { recursive: true }).catch((e: unknown) => {
        throw new UsageError(
          `cannot copy ${source} for the rerun's tools: ${(e as Error).message} (--cwd <dir>)`,
          'CWD_INVALID',
        );
      });
      cwd = scratch;
    }
    const [{ prepareRun }, { rerun }] = await Promise.all([
      import('./runSession.ts'),
      import('../replay/rerun.ts'),
    ]);
    // The model is the recording's: none is needed, and nothing is asked at a terminal.
    const placeholder = { kind: 'recorded', stream: async () => Promise.reject(new Error('unused')) };
    const prepared = await prepareRun({ ...opts, cwd, json: true }, { model: placeholder });
    const { askUser: _a, ...options } = prepared.options;
    return await rerun(records, {
      ...options,
      cwd,
      toolMode: mode,
      // Limits as each run recorded them (the flags given here win); the system prompt is today's.
      settingsFor: ({ system: _s, ...recorded }) => ({ ...recorded, ...prepared.settings }),
    });
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

/** One session's rerun, as lines: `identical …` or `DIVERGED at seq …` with the diff. */
export function printRerun(session: string, report: RerunReport, brief: boolean): void {
  const d = report.divergence;
  if (!d) {
    out(`${brief ? `${session}: ` : ''}identical: ${report.turns} turns rerun with the current code`);
    return;
  }
  out(
    `${brief ? `${session}: ` : ''}DIVERGED at seq ${d.seq} (${d.kind}${d.path ? ` ${d.path}` : ''}) after ${report.turns} turns`,
  );
  if (brief) return;
  out(`  recorded: ${JSON.stringify(d.recorded)}`);
  out(`  current:  ${JSON.stringify(d.current)}`);
  for (const line of (report.diff ?? '').split('\n')) out(`  ${line}`);
}
