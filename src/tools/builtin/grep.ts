import path from 'node:path';
import { z } from 'zod';
import { errnoCode, messageOf } from '../../lib/errors.ts';
import { type FsRoot, readFileConfined, statConfined } from '../confinedFs.ts';
import { GlobAbortedError } from '../globWorker.ts';
import {
  type FileToMatch,
  MAX_LINE_CHARS,
  matchInWorker,
  RegexAbortedError,
  RegexTimeoutError,
} from '../regexWorker.ts';
import type { Tool, ToolContext } from '../types.ts';
import {
  type BuiltinToolOptions,
  looksBinary,
  openFailure,
  toolError,
  toolPath,
  withheldNote,
} from './common.ts';
import { confinedGlob, displayOf, listingGaveUp, patternRefusal, withoutDenied } from './glob.ts';

export const GREP_DEFAULT_HEAD_LIMIT = 250;
const MAX_FILE_BYTES = 5 * 1024 * 1024;
const MAX_FILES_SCANNED = 20_000;
/** One batch of files must finish matching within this; see regexWorker.ts. */
export const GREP_MATCH_TIMEOUT_MS = 5_000;
const READ_BATCH = 32;
/** Content mode keeps at most this many matching lines, whatever head_limit asks for. */
const GREP_MAX_CONTENT_LINES = 10_000;

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
- Matching lines longer than ${MAX_LINE_CHARS} characters are cut. A pattern that takes more than ${GREP_MATCH_TIMEOUT_MS / 1000} s on a batch of files is given up on (avoid nested quantifiers).
- Skips binary files, files over ${MAX_FILE_BYTES / 1024 / 1024} MiB, .git and node_modules. Results are capped (head_limit, default ${GREP_DEFAULT_HEAD_LIMIT}).
- Use this instead of running grep or rg through Bash.`;

interface FileHits {
  path: string;
  mtime: number;
  count: number;
  lines: { n: number; text: string }[];
}

function capped(lines: string[], limit: number, what: string): string {
  if (lines.length <= limit) return lines.join('\n');
  return `${lines.slice(0, limit).join('\n')}\n[… ${lines.length - limit} more ${what} not shown; narrow the search or raise head_limit …]`;
}

export interface GrepToolOptions extends BuiltinToolOptions {
  /** How long one batch of files may take to match before the pattern is given up on. */
  matchTimeoutMs?: number;
}

export function grepTool(opts: GrepToolOptions = {}): Tool<GrepInput> {
  const matchTimeoutMs = opts.matchTimeoutMs ?? GREP_MATCH_TIMEOUT_MS;
  return {
    name: 'Grep',
    description,
    inputSchema: GrepInput,
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      const flags = input['-i'] ? 'i' : '';
      try {
        // Compiled here only to report a syntax error at once; matching happens in a worker.
        new RegExp(input.pattern, flags);
      } catch (e) {
        return toolError(`Invalid regular expression ${JSON.stringify(input.pattern)}: ${messageOf(e)}`);
      }
      if (input.glob !== undefined) {
        const refusal = patternRefusal('glob', input.glob);
        if (refusal) return toolError(refusal);
      }
      const given = input.path ?? '.';
      const p = await toolPath(ctx, given, opts, 'Grep');
      let files: string[];
      let base: string;
      let refusedDirs = 0;
      try {
        const { stats } = await statConfined(p.root, p.absolute);
        if (stats.isDirectory()) {
          base = p.absolute;
          const filter = input.glob;
          const pattern = filter === undefined ? '**/*' : filter.includes('/') ? filter : `**/${filter}`;
          ({ files, refusedDirs } = await confinedGlob(
            p.root,
            base,
            pattern,
            ctx.signal,
            opts.listTimeoutMs,
          ));
        } else {
          base = path.dirname(p.absolute);
          files = [path.basename(p.absolute)];
        }
      } catch (e) {
        if (ctx.signal.aborted || e instanceof GlobAbortedError) return toolError('Grep aborted.');
        const gaveUp = listingGaveUp(e, 'Grep');
        if (gaveUp) return toolError(gaveUp);
        if (errnoCode(e) === 'ENOENT') return toolError(`Path does not exist: ${p.display}`);
        return openFailure(ctx, given, p, e, 'search');
      }
      // Never opened: what a deny or ask rule covers (a file given as `path` the policy checked already).
      const kept = withoutDenied(files, base, opts.readDenied);
      const withheld = { count: files.length - kept.length };
      files = kept;
      const skipped = Math.max(0, files.length - MAX_FILES_SCANNED);
      files = files.slice(0, MAX_FILES_SCANNED);

      const limit = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
      const mode = input.output_mode ?? 'files_with_matches';
      let hits: FileHits[];
      try {
        const keep = mode === 'content' ? Math.min(limit, GREP_MAX_CONTENT_LINES) : 0;
        hits = await searchFiles(ctx, p.root, base, files, input.pattern, flags, matchTimeoutMs, keep, {
          readDenied: opts.readDenied,
          withheld,
        });
      } catch (e) {
        if (e instanceof RegexAbortedError || ctx.signal.aborted) return toolError('Grep aborted.');
        if (e instanceof RegexTimeoutError) {
          return toolError(
            `Grep gave up: the pattern ${JSON.stringify(input.pattern)} took more than ${e.timeoutMs / 1000} s ` +
              'on one batch of files (catastrophic backtracking?). Simplify it: avoid nested quantifiers like (a+)+ ' +
              'and overlapping alternatives like (a|a)*.',
          );
        }
        return toolError(`Grep failed: ${messageOf(e)}`);
      }
      const notes: string[] = [];
      if (skipped) notes.push(`[… stopped after ${MAX_FILES_SCANNED} files; ${skipped} not searched …]`);
      if (refusedDirs) {
        notes.push(
          `[${refusedDirs} director${refusedDirs === 1 ? 'y' : 'ies'} outside the working directory not searched]`,
        );
      }
      if (withheld.count) notes.push(withheldNote(withheld.count));
      const note = notes.length ? `\n${notes.join('\n')}` : '';
      if (hits.length === 0) return { content: `No matches for ${JSON.stringify(input.pattern)}.${note}` };

      if (mode === 'files_with_matches') {
        hits.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
        const list = capped(
          hits.map((h) => h.path),
          limit,
          'files',
        );
        return { content: `Found ${hits.length} file${hits.length === 1 ? '' : 's'}\n${list}${note}` };
      }
      hits.sort(byPath);
      if (mode === 'count') {
        const total = hits.reduce((s, h) => s + h.count, 0);
        const list = capped(
          hits.map((h) => `${h.path}:${h.count}`),
          limit,
          'files',
        );
        return { content: `${list}\n\nFound ${total} matching lines in ${hits.length} files.${note}` };
      }
      const numbered = input['-n'] ?? true;
      const lines = hits
        .flatMap((h) => h.lines.map((l) => (numbered ? `${h.path}:${l.n}:${l.text}` : `${h.path}:${l.text}`)))
        .slice(0, limit);
      const total = hits.reduce((s, h) => s + h.count, 0);
      const more =
        total > lines.length
          ? `\n[… ${total - lines.length} more lines not shown; narrow the search or raise head_limit …]`
          : '';
      return { content: lines.join('\n') + more + note };
    },
  };
}

/** Keeps only the first `keep` lines of `hits` in path order (counts stay exact); returns how many. */
function trimToFirst(hits: FileHits[], keep: number): number {
  hits.sort(byPath);
  let left = keep;
  for (const h of hits) {
    if (h.lines.length > left) h.lines = h.lines.slice(0, left);
    left -= h.lines.length;
  }
  return keep - left;
}

function byPath(a: FileHits, b: FileHits): number {
  return a.path.localeCompare(b.path);
}

/**
 * Reads the candidates through the confined opener (a file swapped for a link out, a FIFO or a
 * device is skipped, never opened for reading) and matches them in the regex worker, in batches
 * small enough to hide I/O latency and to bound one batch's matching time.
 */
async function searchFiles(
  ctx: ToolContext,
  root: FsRoot,
  base: string,
  files: readonly string[],
  source: string,
  flags: string,
  timeoutMs: number,
  /** Lines the output can show (content mode); the rest are counted, never kept. */
  keep: number,
  /** A file whose real path (through a symlink) the rules withhold is dropped unmatched, and counted. */
  rules: { readDenied: ((absPath: string) => boolean) | undefined; withheld: { count: number } },
): Promise<FileHits[]> {
  const hits: FileHits[] = [];
  let kept = 0;
  for (let i = 0; i < files.length; i += READ_BATCH) {
    if (ctx.signal.aborted) throw new RegexAbortedError();
    const batch = files.slice(i, i + READ_BATCH);
    const read = await Promise.all(
      batch.map((rel) =>
        readFileConfined(root, path.join(base, rel), MAX_FILE_BYTES).then(
          (r) => {
            if (rules.readDenied?.(r.real)) {
              rules.withheld.count++;
              return undefined;
            }
            return looksBinary(r.data) ? undefined : r;
          },
          () => undefined,
        ),
      ),
    );
    const toMatch: FileToMatch[] = [];
    read.forEach((r, k) => {
      if (r) toMatch.push({ index: k, data: r.data });
    });
    if (toMatch.length === 0) continue;
    const found = await matchInWorker(source, flags, toMatch, timeoutMs, ctx.signal, keep);
    for (const m of found) {
      const rel = batch[m.index] as string;
      hits.push({
        path: displayOf(ctx, path.join(base, rel)),
        mtime: read[m.index]?.stats.mtimeMs ?? 0,
        count: m.count,
        lines: m.lines,
      });
      kept += m.lines.length;
    }
    // The output shows the first `keep` lines in path order: past twice that, drop lines that
    // can no longer be among them, so memory stays bounded by what is shown, not by the tree.
    if (kept > 2 * keep && keep > 0) kept = trimToFirst(hits, keep);
  }
  return hits;
}
