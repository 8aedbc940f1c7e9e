import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { errnoCode, messageOf } from '../../lib/errors.ts';
import { type FsRoot, OutsideRootError, statConfined } from '../confinedFs.ts';
import { checkGlobPattern } from '../globPatterns.ts';
import { GlobAbortedError, GlobTimeoutError, globInWorker } from '../globWorker.ts';
import type { Tool, ToolContext } from '../types.ts';
import { type BuiltinToolOptions, openFailure, toolError, toolPath, withheldNote } from './common.ts';

export const GLOB_MAX_RESULTS = 100;

export const GlobInput = z.object({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/**/*.test.{ts,tsx}".'),
  path: z.string().optional().describe('Directory to search in (default: the working directory).'),
});
export type GlobInput = z.infer<typeof GlobInput>;

const description = `Finds files by name with a glob pattern ("**/*.ts", "src/**/index.*").

- Returns paths relative to the working directory, most recently modified first, at most ${GLOB_MAX_RESULTS}.
- Skips .git and node_modules (unless the pattern names node_modules). Does not follow symlinks.
- To search file contents use Grep.`;

/** Ignore lists shared with Grep: VCS metadata and dependencies are never what the model looks for. */
export function defaultIgnores(pattern: string): string[] {
  return pattern.includes('node_modules') ? ['**/.git/**'] : ['**/.git/**', '**/node_modules/**'];
}

/** A refusal for a pattern that could leave the search directory, or undefined when it cannot. */
export function patternRefusal(field: string, pattern: string): string | undefined {
  const v = checkGlobPattern(pattern);
  return v.ok ? undefined : `The ${field} ${JSON.stringify(pattern.slice(0, 200))} is refused: ${v.why}.`;
}

/** How long one listing may take before it is given up on (the main thread stays free meanwhile). */
export const GLOB_TIMEOUT_MS = 30_000;

/**
 * Files under `base` matching `pattern`, relative to `base`, listed in a worker thread through
 * descriptors verified to be inside `root` (globWorker.ts): whatever the glob library makes of the
 * pattern, whatever happens to the tree meanwhile, nothing outside is listed, and a pattern that
 * backtracks for minutes costs one timed-out call, not the process.
 */
export function confinedGlob(
  root: FsRoot,
  base: string,
  pattern: string,
  signal: AbortSignal,
  timeoutMs = GLOB_TIMEOUT_MS,
): Promise<{ files: string[]; refusedDirs: number }> {
  return globInWorker(root.spec, base, pattern, defaultIgnores(pattern), timeoutMs, signal);
}

/** The is_error text for a listing that was given up on, or undefined for any other error. */
export function listingGaveUp(e: unknown, what: string): string | undefined {
  if (!(e instanceof GlobTimeoutError)) return undefined;
  return (
    `${what} gave up: listing took more than ${e.timeoutMs / 1000} s. A pattern with many wildcards ` +
    '(`*?*?*?…`, several `**` with wildcards between them) can take that long on each path; simplify it, ' +
    'or narrow the search with path.'
  );
}

/** The listed files (relative to `base`) no permission rule withholds. */
export function withoutDenied(
  files: string[],
  base: string,
  readDenied: ((absPath: string) => boolean) | undefined,
): string[] {
  if (!readDenied) return files;
  return files.filter((rel) => !readDenied(path.join(base, rel)));
}

export function displayOf(ctx: ToolContext, abs: string): string {
  return path.relative(ctx.cwd, abs).split(path.sep).join('/') || path.basename(abs);
}

export function globTool(opts: BuiltinToolOptions = {}): Tool<GlobInput> {
  return {
    name: 'Glob',
    description,
    inputSchema: GlobInput,
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      const refusal = patternRefusal('pattern', input.pattern);
      if (refusal) return toolError(refusal);
      const p = await toolPath(ctx, input.path ?? '.', opts, 'Glob');
      let found: string[];
      let refusedDirs: number;
      try {
        const { stats } = await statConfined(p.root, p.absolute);
        if (!stats.isDirectory()) return toolError(`${p.display} is not a directory.`);
        ({ files: found, refusedDirs } = await confinedGlob(
          p.root,
          p.absolute,
          input.pattern,
          ctx.signal,
          opts.listTimeoutMs,
        ));
      } catch (e) {
        if (ctx.signal.aborted || e instanceof GlobAbortedError) return toolError('Glob aborted.');
        const gaveUp = listingGaveUp(e, 'Glob');
        if (gaveUp) return toolError(gaveUp);
        if (e instanceof OutsideRootError || errnoCode(e))
          return openFailure(ctx, input.path ?? '.', p, e, 'search');
        return toolError(`Glob failed in ${p.display}: ${messageOf(e)}`);
      }
      const kept = withoutDenied(found, p.absolute, opts.readDenied);
      const withheld = found.length - kept.length;
      found = kept;
      const withTimes = await Promise.all(
        found.map(async (rel) => {
          const abs = path.join(p.absolute, rel);
          // lstat: a name listed inside the root is never followed out for its time.
          const mtime = await lstat(abs).then(
            (s) => s.mtimeMs,
            () => 0,
          );
          return { path: displayOf(ctx, abs), mtime };
        }),
      );
      withTimes.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
      const notes = [
        refusedDirs
          ? `[${refusedDirs} director${refusedDirs === 1 ? 'y' : 'ies'} outside the working directory not listed]`
          : '',
        withheldNote(withheld),
      ].filter(Boolean);
      const note = notes.length ? `\n${notes.join('\n')}` : '';
      if (withTimes.length === 0) return { content: `No files match ${input.pattern}.${note}` };
      const shown = withTimes.slice(0, GLOB_MAX_RESULTS).map((f) => f.path);
      if (withTimes.length > GLOB_MAX_RESULTS) {
        shown.push(
          `[… ${withTimes.length - GLOB_MAX_RESULTS} more files not shown; use a narrower pattern or path …]`,
        );
      }
      return { content: shown.join('\n') + note };
    },
  };
}
