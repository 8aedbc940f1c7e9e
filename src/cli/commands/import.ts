import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import type { ImportedSession, ImportReport } from '../../import/importer.ts';
import {
  EXIT,
  err,
  type GlobalOptions,
  openStore,
  out,
  plural,
  printJson,
  selfCommand,
  storeDir,
  storeLocationOf,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface ImportCliOptions extends GlobalOptions {
  force?: boolean;
}

/** The `--json` shape (docs/cli.md): these fields and nothing else. */
interface JsonSession {
  sessionId: string;
  source: string;
  records: number;
  transitions: number;
  unmapped: number;
  children: JsonSession[];
}

function toJson(s: ImportedSession): JsonSession {
  const { sessionId, source, records, transitions, unmapped } = s;
  return { sessionId, source, records, transitions, unmapped, children: s.children.map(toJson) };
}

function* flatten(sessions: readonly ImportedSession[]): Generator<ImportedSession> {
  for (const s of sessions) {
    yield s;
    yield* flatten(s.children);
  }
}

export function registerImport(program: Command): void {
  withCommonOptions(
    program
      .command('import')
      .description(
        'import Claude Code transcripts (a .jsonl file, a project folder or ~/.claude/projects) as sessions',
      )
      .argument('<paths...>', 'transcript files or folders')
      .option('--force', 'import again what was imported before (replaces the earlier import)'),
  ).action(async (paths: string[], opts: ImportCliOptions) => {
    // A path that does not exist is bad usage, found before the store is opened (or created).
    for (const p of paths) {
      if (!(await stat(p).catch(() => undefined)))
        throw new UsageError(`${p}: no such file or folder`, 'IMPORT_PATH');
    }
    const { importTranscripts, ImportPathError } = await import('../../import/index.ts');
    const store = await openStore(opts, { create: true });
    let report: ImportReport;
    try {
      report = await importTranscripts(store, paths, {
        force: opts.force === true,
        ...(storeLocationOf(opts).kind === 'file' ? { skipDirs: [storeDir(opts)] } : {}),
      });
    } catch (e) {
      if (e instanceof ImportPathError) throw new UsageError(e.message, e.code);
      throw e;
    } finally {
      await store.close();
    }
    const all = [...flatten(report.sessions)];
    // Malformed lines are named one by one (file and line); other unmapped lines by count.
    for (const s of all) {
      for (const m of s.malformed)
        err(`warning: ${s.source} line ${m.line}: ${m.why}; kept as import.unmapped`);
    }
    for (const f of report.failures) err(`error: ${f.source}: ${f.message}`);
    // Said on stderr in --json mode, whose stdout shape is fixed.
    if (opts.json) for (const f of report.skipped) err(`warning: skipped ${skippedNote(f)}`);
    const unmapped = all.reduce((n, s) => n + s.unmapped, 0);
    if (opts.json) printJson({ sessions: report.sessions.map(toJson) });
    else printHuman(report, all, unmapped);
    // Lines kept as import.unmapped are counted and reported, not failures: the session is
    // complete without them (a line type newer than this importer). Input that could not be read
    // — a malformed line, a transcript that failed — is.
    const malformed = all.reduce((n, s) => n + s.malformed.length, 0);
    if (malformed > 0 || report.failures.length > 0) process.exitCode = EXIT.failed;
  });
}

const skippedNote = (f: ImportReport['skipped'][number]) =>
  f.why === 'hidden'
    ? `${f.path} (a hidden file: name it on its own to import it)`
    : `${f.path} (the store imported into: its logs are no transcripts)`;

function printHuman(report: ImportReport, all: ImportedSession[], unmapped: number): void {
  for (const s of all) {
    const child = s.parent ? '  child ' : '';
    if (s.status === 'already imported') {
      out(`${child}kept      ${s.sessionId} ← ${s.source}: imported before (--force imports it again)`);
      if (s.grown)
        out(`${child}          the transcript changed since (${s.grown.before} → ${s.grown.now} bytes)`);
      continue;
    }
    const link = s.parent
      ? `; agent ${s.parent.agent}${s.parent.toolUseId ? `, Task ${s.parent.toolUseId}` : ''}${s.parent.compaction ? `, compaction at seq ${s.parent.compaction.seq}` : ''}`
      : '';
    out(
      `${child}imported  ${s.sessionId} ← ${s.source} (${plural(s.records, 'record')}, ${plural(s.transitions, 'transition')}${s.unmapped ? `, ${plural(s.unmapped, 'line')} not mapped` : ''}${link})`,
    );
    const kinds = Object.entries(s.unmappedTypes)
      .map(([type, n]) => `${type} ×${n}`)
      .join(', ');
    if (kinds)
      out(`          not mapped: ${kinds} (${selfCommand()} log ${s.sessionId} --type import.unmapped)`);
  }
  for (const f of report.ignored) out(`ignored   ${f} (inside a session folder, not a transcript)`);
  for (const f of report.skipped) out(`skipped   ${skippedNote(f)}`);
  const imported = all.filter((s) => s.status === 'imported').length;
  const kept = all.length - imported;
  out(
    `${plural(all.length, 'transcript')}: ${imported} imported, ${kept} kept${report.failures.length ? `, ${report.failures.length} failed` : ''}; ${plural(unmapped, 'line')} not mapped`,
  );
}
