import { z } from 'zod';
import { messageOf } from '../../lib/errors.ts';
import { openFileForUpdate, type UpdatableFile } from '../confinedFs.ts';
import type { FileReadFact, Tool } from '../types.ts';
import {
  type BuiltinToolOptions,
  fileFact,
  openFailure,
  splitLines,
  staleReason,
  toolError,
  toolPath,
} from './common.ts';

/** An existing file is read whole to check it is unchanged since Read; past this it is refused. */
const WRITE_MAX_EXISTING_BYTES = 64 * 1024 * 1024;
/** The most one Write may put in a file (the same cap Edit has for the file it produces). */
export const WRITE_MAX_BYTES = 64 * 1024 * 1024;

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
      const size = Buffer.byteLength(input.content);
      if (size > WRITE_MAX_BYTES) {
        return toolError(`The content is ${size} bytes, over the cap of ${WRITE_MAX_BYTES} for one Write.`);
      }
      const p = await toolPath(ctx, input.file_path, opts, 'Write');
      const relative = p.display;
      let file: UpdatableFile;
      try {
        file = await openFileForUpdate(p.root, p.absolute, { create: true, mkdirs: true });
      } catch (e) {
        return openFailure(ctx, input.file_path, p, e, 'write');
      }
      const existed = !file.created;
      let fact: FileReadFact;
      try {
        if (existed) {
          const stale = staleReason(ctx, p.absolute, relative, await file.read(WRITE_MAX_EXISTING_BYTES));
          if (stale) return toolError(stale);
        }
        // The fact is what we wrote, so a following Edit works without another Read.
        fact = fileFact(p.absolute, input.content, await file.replace(input.content));
      } catch (e) {
        return toolError(`Cannot write ${relative}: ${messageOf(e)}`);
      } finally {
        file.close();
      }
      const lines = splitLines(input.content).length;
      return {
        content: `${existed ? 'Overwrote' : 'Created'} ${relative} (${lines} line${lines === 1 ? '' : 's'}).`,
        filesRead: [fact],
      };
    },
  };
}
