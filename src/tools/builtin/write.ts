import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Tool } from '../types.ts';
import {
  type BuiltinToolOptions,
  errnoCode,
  fileFact,
  messageOf,
  resolveToolPath,
  splitLines,
  staleReason,
  toolError,
} from './common.ts';

export const WriteInput = z.object({
  file_path: z
    .string()
    .min(1)
    .describe('Path of the file to write, absolute or relative to the working directory.'),
  content: z.string().describe('The complete new content of the file.'),
});
export type WriteInput = z.infer<typeof WriteInput>;

const description = `Writes a file, creating it (and any missing parent directories) or replacing its whole content.

- To overwrite an existing file you must have read it with Read in this session, and it must not have changed since; otherwise the write is refused.
- Prefer Edit for changes to an existing file: it only sends the part that changes.
- Do not create documentation or README files unless asked.`;

export function writeTool(opts: BuiltinToolOptions = {}): Tool<WriteInput> {
  return {
    name: 'Write',
    description,
    inputSchema: WriteInput,
    isReadOnly: false,
    isConcurrencySafe: () => false,
    async call(input, ctx) {
      const r = await resolveToolPath(ctx, input.file_path, opts);
      if ('error' in r) return r.error;
      const { absolute, relative } = r.path;

      let existed = false;
      try {
        const st = await stat(absolute);
        if (st.isDirectory()) return toolError(`${relative} is a directory; give a file path.`);
        existed = true;
      } catch (e) {
        if (errnoCode(e) !== 'ENOENT') return toolError(`Cannot write ${relative}: ${messageOf(e)}`);
      }
      if (existed) {
        const stale = staleReason(ctx, absolute, relative, await readFile(absolute));
        if (stale) return toolError(stale);
      }

      try {
        await mkdir(path.dirname(absolute), { recursive: true });
        await writeFile(absolute, input.content, 'utf8');
      } catch (e) {
        return toolError(`Cannot write ${relative}: ${messageOf(e)}`);
      }
      // The fact is what we wrote, so a following Edit works without another Read.
      const fact = fileFact(absolute, input.content, await stat(absolute));
      const lines = splitLines(input.content).length;
      return {
        content: `${existed ? 'Overwrote' : 'Created'} ${relative} (${lines} line${lines === 1 ? '' : 's'}).`,
        filesRead: [fact],
      };
    },
  };
}
