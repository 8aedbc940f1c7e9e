import type { RecordOf } from './records.ts';

/** One line about a `memory.loaded` record, for `reloop log` and the viewer's notes. */
export function memoryLoadedText(r: RecordOf<'memory.loaded'>): string {
  const skipped = r.data.warnings?.length ? `; ${r.data.warnings.length} not read` : '';
  const files = r.data.files;
  if (!files) return `memory: the files of seq ${r.data.filesFrom}, unchanged${skipped}`;
  const chars = files.reduce((n, f) => n + f.content.length, 0);
  const list = files.map((f) => `${f.source} ${f.path}${f.importedBy ? ' (imported)' : ''}`).join(', ');
  return files.length === 0
    ? `memory: no CLAUDE.md files${skipped}`
    : `memory: ${files.length} ${files.length === 1 ? 'file' : 'files'}, ${chars} characters (${list})${skipped}`;
}
