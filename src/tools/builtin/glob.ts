import { stat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { z } from 'zod';
import type { Tool } from '../types.ts';
import { type BuiltinToolOptions, messageOf, resolveToolPath, toolError } from './common.ts';

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

/** Patterns that climb out of the search directory or are absolute would bypass the path check. */
export function escapingPattern(pattern: string): boolean {
  return path.isAbsolute(pattern) || pattern.split(/[\\/]/).includes('..');
}

export function globTool(opts: BuiltinToolOptions = {}): Tool<GlobInput> {
  return {
    name: 'Glob',
    description,
    inputSchema: GlobInput,
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      if (escapingPattern(input.pattern)) {
        return toolError(
          'The pattern must be relative and must not contain "..": set path to search elsewhere.',
        );
      }
      const r = await resolveToolPath(ctx, input.path ?? '.', opts);
      if ('error' in r) return r.error;
      const base = r.path.absolute;
      let found: string[];
      try {
        const st = await stat(base);
        if (!st.isDirectory()) return toolError(`${r.path.relative} is not a directory.`);
        found = await glob(input.pattern, {
          cwd: base,
          dot: true,
          onlyFiles: true,
          followSymbolicLinks: false,
          ignore: defaultIgnores(input.pattern),
          signal: ctx.signal,
        });
      } catch (e) {
        if (ctx.signal.aborted) return toolError('Glob aborted.');
        return toolError(`Glob failed in ${r.path.relative}: ${messageOf(e)}`);
      }
      const withTimes = await Promise.all(
        found.map(async (rel) => {
          const abs = path.join(base, rel);
          const mtime = await stat(abs).then(
            (s) => s.mtimeMs,
            () => 0,
          );
          return { path: path.relative(ctx.cwd, abs).split(path.sep).join('/'), mtime };
        }),
      );
      withTimes.sort((a, b) => b.mtime - a.mtime || a.path.localeCompare(b.path));
      if (withTimes.length === 0) return { content: `No files match ${input.pattern}.` };
      const shown = withTimes.slice(0, GLOB_MAX_RESULTS).map((f) => f.path);
      if (withTimes.length > GLOB_MAX_RESULTS) {
        shown.push(
          `[… ${withTimes.length - GLOB_MAX_RESULTS} more files not shown; use a narrower pattern or path …]`,
        );
      }
      return { content: shown.join('\n') };
    },
  };
}
