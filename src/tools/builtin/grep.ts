import type { Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import type { Tool } from '../types.ts';
import {
  type BuiltinToolOptions,
  errnoCode,
  looksBinary,
  messageOf,
  resolveToolPath,
  splitLines,
  toolError,
} from './common.ts';
import { defaultIgnores, escapingPattern } from './glob.ts';

export const GREP_DEFAULT_HEAD_LIMIT = 250;
const MAX_FILE_BYTES = 5 * 1024 * 1024;
const MAX_FILES_SCANNED = 20_000;
const MAX_MATCH_LINE_CHARS = 500;

export const GrepInput = z.object({
  pattern: z
    .string()
    .min(1)
    .describe('JavaScript regular expression to search for, e.g. "function\\s+\\w+".'),
  path: z.string().optional().describe('File or directory to search (default: the working directory).'),
  glob: z
    .string()
    .optional()
    .describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.{ts,tsx}".'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('content: matching lines; files_with_matches: file paths (default); count: matches per file.'),
  '-i': z.boolean().optional().describe('Case-insensitive search.'),
  '-n': z.boolean().optional().describe('Show line numbers in content mode (default true).'),
  head_limit: z.number().int().positive().optional().describe('Return at most this many lines or files.'),
});
export type GrepInput = z.infer<typeof GrepInput>;

const description = `Searches file contents with a regular expression (JavaScript syntax).

- output_mode "files_with_matches" (default) lists matching files, most recently modified first; "content" shows matching lines as path:line:text; "count" shows matches per file.
- Filter files with glob ("*.ts", "src/**/*.tsx"); a glob without "/" matches file names at any depth. Set "-i" for case-insensitive matching.
- Skips binary files, files over ${MAX_FILE_BYTES / 1024 / 1024} MiB, .git and node_modules. Results are capped (head_limit, default ${GREP_DEFAULT_HEAD_LIMIT}).
- Use this instead of running grep or rg through Bash.`;

interface FileHits {
  path: string;
  mtime: number;
  lines: { n: number; text: string }[];
}

async function candidateFiles(
  base: string,
  baseStat: Stats,
  filter: string | undefined,
  signal: AbortSignal,
) {
  if (!baseStat.isDirectory()) return [''];
  const pattern = filter === undefined ? '**/*' : filter.includes('/') ? filter : `**/${filter}`;
  return glob(pattern, {
    cwd: base,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: defaultIgnores(filter ?? ''),
    signal,
  });
}

async function searchFile(abs: string, display: string, re: RegExp): Promise<FileHits | undefined> {
  const st = await stat(abs).catch(() => undefined);
  if (!st?.isFile() || st.size > MAX_FILE_BYTES) return undefined;
  const data = await readFile(abs).catch(() => undefined);
  if (!data || looksBinary(data)) return undefined;
  const lines: FileHits['lines'] = [];
  splitLines(data.toString('utf8')).forEach((text, i) => {
    if (re.test(text)) lines.push({ n: i + 1, text });
  });
  return lines.length ? { path: display, mtime: st.mtimeMs, lines } : undefined;
}

function clip(text: string): string {
  return text.length > MAX_MATCH_LINE_CHARS ? `${text.slice(0, MAX_MATCH_LINE_CHARS)}…` : text;
}

function capped(lines: string[], limit: number, what: string): string {
  if (lines.length <= limit) return lines.join('\n');
  return `${lines.slice(0, limit).join('\n')}\n[… ${lines.length - limit} more ${what} not shown; narrow the search or raise head_limit …]`;
}

export function grepTool(opts: BuiltinToolOptions = {}): Tool<GrepInput> {
  return {
    name: 'Grep',
    description,
    inputSchema: GrepInput,
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      let re: RegExp;
      try {
        // No `g` flag: test() on a global regex keeps lastIndex between lines and skips matches.
        re = new RegExp(input.pattern, input['-i'] ? 'i' : '');
      } catch (e) {
        return toolError(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${messageOf(e)}`);
      }
      if (input.glob !== undefined && escapingPattern(input.glob)) {
        return toolError('The glob must be relative and must not contain "..".');
      }
      const r = await resolveToolPath(ctx, input.path ?? '.', opts);
      if ('error' in r) return r.error;
      const base = r.path.absolute;
      let files: string[];
      try {
        files = await candidateFiles(base, await stat(base), input.glob, ctx.signal);
      } catch (e) {
        if (ctx.signal.aborted) return toolError('Grep aborted.');
        if (errnoCode(e) === 'ENOENT') return toolError(`Path does not exist: ${r.path.relative}`);
        return toolError(`Cannot search ${r.path.relative}: ${messageOf(e)}`);
      }
      const skipped = Math.max(0, files.length - MAX_FILES_SCANNED);
      files = files.slice(0, MAX_FILES_SCANNED);

      const hits: FileHits[] = [];
      // Small batches: parallel enough to hide I/O latency, few enough open files.
      for (let i = 0; i < files.length; i += 32) {
        if (ctx.signal.aborted) return toolError('Grep aborted.');
        const batch = files.slice(i, i + 32).map((rel) => {
          const abs = path.join(base, rel);
          const display = path.relative(ctx.cwd, abs).split(path.sep).join('/') || path.basename(abs);
          return searchFile(abs, display, re);
        });
        for (const h of await Promise.all(batch)) if (h) hits.push(h);
      }
      const note = skipped ? `\n[… stopped after ${MAX_FILES_SCANNED} files; ${skipped} not searched …]` : '';
      if (hits.length === 0) return { content: `No matches for ${JSON.stringify(input.pattern)}.${note}` };

      const limit = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
      const mode = input.output_mode ?? 'files_with_matches';
      if (mode === 'files_with_matches') {
        hits.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
        const list = capped(
          hits.map((h) => h.path),
          limit,
          'files',
        );
        return { content: `Found ${hits.length} file${hits.length === 1 ? '' : 's'}\n${list}${note}` };
      }
      hits.sort((a, b) => a.path.localeCompare(b.path));
      if (mode === 'count') {
        const total = hits.reduce((s, h) => s + h.lines.length, 0);
        const list = capped(
          hits.map((h) => `${h.path}:${h.lines.length}`),
          limit,
          'files',
        );
        return { content: `${list}\n\nFound ${total} matching lines in ${hits.length} files.${note}` };
      }
      const numbered = input['-n'] ?? true;
      const lines = hits.flatMap((h) =>
        h.lines.map((l) => (numbered ? `${h.path}:${l.n}:${clip(l.text)}` : `${h.path}:${clip(l.text)}`)),
      );
      return { content: capped(lines, limit, 'lines') + note };
    },
  };
}
