import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Tool, ToolOutput } from '../types.ts';
import {
  type BuiltinToolOptions,
  errnoCode,
  fileFact,
  looksBinary,
  messageOf,
  numberLine,
  resolveToolPath,
  splitLines,
  staleReason,
  toolError,
} from './common.ts';

export const EditInput = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Path of the file to change, absolute or relative to the working directory.'),
  old_string: z.string().describe('The exact text to replace (empty only to create a new file).'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring a unique one.'),
});
export type EditInput = z.infer<typeof EditInput>;

const description = `Replaces exact text in a file.

- The file must have been read with Read in this session and not changed since.
- old_string must match the file exactly, including whitespace and indentation, and without Read's line-number prefix (everything after the tab).
- old_string must occur exactly once unless replace_all is true: include enough surrounding lines to make it unique.
- With an empty old_string and a file that does not exist yet, creates the file with new_string as its content.`;

/** Non-overlapping occurrences, the same ones split/join replaces. */
function countOccurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

/** A few numbered lines around the first change, so the model sees the result without a new Read. */
function snippet(text: string, changeAt: number, changeLen: number): string {
  const lines = splitLines(text);
  const first = text.slice(0, changeAt).split('\n').length;
  const last = first + text.slice(changeAt, changeAt + changeLen).split('\n').length - 1;
  const from = Math.max(1, first - 3);
  const to = Math.min(lines.length, last + 3, from + 40);
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(numberLine(n, lines[n - 1] ?? ''));
  return out.join('\n');
}

export function editTool(opts: BuiltinToolOptions = {}): Tool<EditInput> {
  return {
    name: 'Edit',
    description,
    inputSchema: EditInput,
    isReadOnly: false,
    isConcurrencySafe: () => false,
    async call(input, ctx): Promise<ToolOutput> {
      const r = await resolveToolPath(ctx, input.file_path, opts);
      if ('error' in r) return r.error;
      const { absolute, relative } = r.path;
      const { old_string: oldStr, new_string: newStr } = input;
      if (oldStr === newStr) return toolError('old_string and new_string are identical: nothing to change.');

      let data: Buffer;
      try {
        data = await readFile(absolute);
      } catch (e) {
        const code = errnoCode(e);
        if (code === 'ENOENT' && oldStr === '') return create(absolute, relative, newStr);
        if (code === 'ENOENT') return toolError(`File does not exist: ${relative}`);
        if (code === 'EISDIR') return toolError(`${relative} is a directory, not a file.`);
        return toolError(`Cannot read ${relative}: ${messageOf(e)}`);
      }
      const stale = staleReason(ctx, absolute, relative, data);
      if (stale) return toolError(stale);
      if (oldStr === '') {
        return toolError(`${relative} already exists; old_string may only be empty to create a new file.`);
      }

      const text = data.toString('utf8');
      // Decoding and re-encoding would silently corrupt a binary or non-UTF-8 file.
      if (looksBinary(data) || !Buffer.from(text, 'utf8').equals(data)) {
        return toolError(`${relative} is not a UTF-8 text file; Edit would corrupt it.`);
      }
      const count = countOccurrences(text, oldStr);
      if (count === 0) {
        return toolError(
          `old_string was not found in ${relative}. It must match exactly, including whitespace and ` +
            `indentation; Read the file again to copy the current text.`,
        );
      }
      if (count > 1 && !input.replace_all) {
        return toolError(
          `old_string was found ${count} times in ${relative}. Add surrounding lines to make it unique, ` +
            `or set replace_all to true to replace every occurrence.`,
        );
      }
      // split/join, not String.replace: `$&` and friends in new_string must stay literal.
      const updated = text.split(oldStr).join(newStr);
      try {
        await writeFile(absolute, updated, 'utf8');
      } catch (e) {
        return toolError(`Cannot write ${relative}: ${messageOf(e)}`);
      }
      const fact = fileFact(absolute, updated, await stat(absolute));
      const at = text.indexOf(oldStr);
      return {
        content:
          `Edited ${relative}: replaced ${count} occurrence${count === 1 ? '' : 's'}.\n` +
          snippet(updated, at, newStr.length),
        filesRead: [fact],
      };
    },
  };
}

async function create(absolute: string, relative: string, content: string): Promise<ToolOutput> {
  try {
    await mkdir(path.dirname(absolute), { recursive: true });
    await writeFile(absolute, content, { encoding: 'utf8', flag: 'wx' });
  } catch (e) {
    return toolError(`Cannot create ${relative}: ${messageOf(e)}`);
  }
  return { content: `Created ${relative}.`, filesRead: [fileFact(absolute, content, await stat(absolute))] };
}
