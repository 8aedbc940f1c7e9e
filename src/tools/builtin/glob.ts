import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import { confinedDirReader, type FsRoot, OutsideRootError, statConfined } from '../confinedFs.ts';
import { checkGlobPattern } from '../globPatterns.ts';
import type { Tool, ToolContext } from '../types.ts';
import { type BuiltinToolOptions, errnoCode, messageOf, openFailure, toolError, toolPath } from './common.ts';

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

/**
 * Files under `base` matching `pattern`, relative to `base`. Every directory is listed through a
 * descriptor verified to be inside `root`, so whatever the glob library makes of the pattern, and
 * whatever happens to the tree meanwhile, nothing outside is listed.
 */
export async function confinedGlob(
  root: FsRoot,
  base: string,
  pattern: string,
  signal: AbortSignal,
): Promise<{ files: string[]; refusedDirs: number }> {
  const reader = confinedDirReader(root);
  const files = await glob(pattern, {
    cwd: base,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: defaultIgnores(pattern),
    signal,
    fs: reader.fs,
  });
  return { files, refusedDirs: reader.refused.length };
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
      const p = await toolPath(ctx, input.path ?? '.', opts);
      let found: string[];
      let refusedDirs: number;
      try {
        const { stats } = await statConfined(p.root, p.absolute);
        if (!stats.isDirectory()) return toolError(`${p.display} is not a directory.`);
        ({ files: found, refusedDirs } = await confinedGlob(p.root, p.absolute, input.pattern, ctx.signal));
      } catch (e) {
        if (ctx.signal.aborted) return toolError('Glob aborted.');
        if (e instanceof OutsideRootError || errnoCode(e))
          return openFailure(ctx, input.path ?? '.', p, e, 'search');
        return toolError(`Glob failed in ${p.display}: ${messageOf(e)}`);
      }
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
      const note = refusedDirs
        ? `\n[${refusedDirs} director${refusedDirs === 1 ? 'y' : 'ies'} outside the working directory not listed]`
        : '';
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
