import { z } from 'zod';
import { FileTooLargeError, type ReadResult, readFileConfined } from '../confinedFs.ts';
import type { Tool } from '../types.ts';
import {
  type BuiltinToolOptions,
  fileFact,
  looksBinary,
  numberLine,
  openFailure,
  splitLines,
  toolError,
  toolPath,
} from './common.ts';

/** Above this size a whole-file read is refused: it would flood the context window. */
export const READ_MAX_BYTES_WITHOUT_RANGE = 256 * 1024;
/** Above this even a ranged read is refused: the file is loaded whole to hash it. */
export const READ_MAX_BYTES = 32 * 1024 * 1024;
export const READ_DEFAULT_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
const MAX_OUTPUT_CHARS = 100_000;

export const ReadInput = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Path of the file to read, absolute or relative to the working directory.'),
  offset: z.number().int().positive().optional().describe('Line number to start reading from (1-based).'),
  limit: z
    .number()
    .int()
    .positive()
    .optional()
    .describe(`How many lines to read (default ${READ_DEFAULT_LIMIT}).`),
});
export type ReadInput = z.infer<typeof ReadInput>;

const description = `Reads a text file from the working directory.

- Output is numbered like \`cat -n\`: line number, a tab, then the line. The numbers are not part of the file: never include them in Edit's old_string.
- Reads up to ${READ_DEFAULT_LIMIT} lines from the start by default. Use offset (1-based line number) and limit for long files; files over ${READ_MAX_BYTES_WITHOUT_RANGE / 1024} KiB must be read with offset/limit. Lines longer than ${MAX_LINE_CHARS} characters are cut.
- Binary files are refused. Use Glob to find files and Grep to search contents; Read one file per call (several calls may run in parallel).
- A file must be read before it can be changed with Edit or overwritten with Write.`;

export function readTool(opts: BuiltinToolOptions = {}): Tool<ReadInput> {
  return {
    name: 'Read',
    description,
    inputSchema: ReadInput,
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      const p = await toolPath(ctx, input.file_path, opts, 'Read');
      const relative = p.display;
      const ranged = input.offset !== undefined || input.limit !== undefined;
      const cap = ranged ? READ_MAX_BYTES : READ_MAX_BYTES_WITHOUT_RANGE;
      let read: ReadResult;
      try {
        read = await readFileConfined(p.root, p.absolute, cap);
      } catch (e) {
        if (e instanceof FileTooLargeError) {
          return toolError(
            `File ${relative} is too large to read whole (${e.size} bytes; the cap is ${cap} bytes). ` +
              (ranged
                ? 'Use Bash with head, tail or sed -n to look at parts of it.'
                : 'Read a part of it with offset and limit, or search it with Grep.'),
          );
        }
        return openFailure(ctx, input.file_path, p, e, 'read');
      }
      const { data, stats: st } = read;
      const absolute = p.absolute;
      if (looksBinary(data)) {
        return toolError(
          `File ${relative} looks binary (it contains NUL bytes); Read only shows text files.`,
        );
      }
      const fact = fileFact(absolute, data, st);
      const lines = splitLines(data.toString('utf8'));
      if (lines.length === 0) {
        return { content: `File ${relative} is empty.`, filesRead: [fact] };
      }
      const start = input.offset ?? 1;
      if (start > lines.length) {
        return {
          content: `File ${relative} has ${lines.length} lines; offset ${start} is past the end.`,
          filesRead: [fact],
        };
      }
      return { content: render(lines, start, input.limit ?? READ_DEFAULT_LIMIT), filesRead: [fact] };
    },
  };
}

function render(lines: string[], start: number, limit: number): string {
  const end = Math.min(lines.length, start - 1 + limit);
  const out: string[] = [];
  let chars = 0;
  for (let n = start; n <= end; n++) {
    let text = lines[n - 1] ?? '';
    if (text.length > MAX_LINE_CHARS) text = `${text.slice(0, MAX_LINE_CHARS)}… [line truncated]`;
    const line = numberLine(n, text);
    if (chars + line.length > MAX_OUTPUT_CHARS && out.length > 0) {
      out.push(`[… output capped at line ${n - 1} of ${lines.length}; continue with offset=${n} …]`);
      return out.join('\n');
    }
    chars += line.length + 1;
    out.push(line);
  }
  if (end < lines.length) out.push(`[… ${lines.length - end} more lines; continue with offset=${end + 1} …]`);
  return out.join('\n');
}
