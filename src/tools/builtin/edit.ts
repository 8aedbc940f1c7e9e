import { z } from 'zod';
import { messageOf } from '../../lib/errors.ts';
import { openFileForUpdate, type UpdatableFile } from '../confinedFs.ts';
import type { Tool, ToolContext, ToolOutput } from '../types.ts';
import {
  type BuiltinToolOptions,
  fileFact,
  looksBinary,
  numberLine,
  openFailure,
  splitLines,
  staleReason,
  toolError,
  toolPath,
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

/** Edit loads the whole file (to hash it and replace exactly); past this it is refused. */
const EDIT_MAX_BYTES = 64 * 1024 * 1024;

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
      const p = await toolPath(ctx, input.file_path, opts, 'Edit');
      const relative = p.display;
      const { old_string: oldStr, new_string: newStr } = input;
      if (oldStr === newStr) return toolError('old_string and new_string are identical: nothing to change.');

      let file: UpdatableFile;
      try {
        // Only an empty old_string may create the file (and its directories).
        file = await openFileForUpdate(p.root, p.absolute, { create: oldStr === '', mkdirs: true });
      } catch (e) {
        return openFailure(ctx, input.file_path, p, e, 'write');
      }
      try {
        return await edit(ctx, file, p.absolute, relative, input);
      } catch (e) {
        return toolError(`Cannot write ${relative}: ${messageOf(e)}`);
      } finally {
        file.close();
      }
    },
  };
}

async function edit(
  ctx: ToolContext,
  file: UpdatableFile,
  absolute: string,
  relative: string,
  input: EditInput,
): Promise<ToolOutput> {
  const { old_string: oldStr, new_string: newStr } = input;
  if (file.created) {
    if (Buffer.byteLength(newStr) > EDIT_MAX_BYTES) {
      return toolError(`new_string is over the cap of ${EDIT_MAX_BYTES} bytes for one file.`);
    }
    return {
      content: `Created ${relative}.`,
      filesRead: [fileFact(absolute, newStr, await file.replace(newStr))],
    };
  }
  const data = await file.read(EDIT_MAX_BYTES);
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
  // replace_all of a short, frequent old_string by a long new_string multiplies the file: a 1 MB
  // file of "a" and a 1 KB new_string would be 1 GB. Refused before it is built.
  const bytes = data.length + count * (Buffer.byteLength(newStr) - Buffer.byteLength(oldStr));
  if (bytes > EDIT_MAX_BYTES) {
    return toolError(
      `The edit would make ${relative} ${bytes} bytes (${count} replacements), over the cap of ${EDIT_MAX_BYTES}.`,
    );
  }
  // split/join, not String.replace: `$&` and friends in new_string must stay literal.
  const updated = text.split(oldStr).join(newStr);
  const fact = fileFact(absolute, updated, await file.replace(updated));
  const at = text.indexOf(oldStr);
  return {
    content:
      `Edited ${relative}: replaced ${count} occurrence${count === 1 ? '' : 's'}.\n` +
      snippet(updated, at, newStr.length),
    filesRead: [fact],
  };
}
