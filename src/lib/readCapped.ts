import { open } from 'node:fs/promises';
import { messageOf } from './errors.ts';

/**
 * A project file read with a size cap (agent files, CLAUDE.md): never more than `max` bytes are
 * read, whatever the file claims. Its text; `{ problem }` when it is too large or cannot be read;
 * undefined when it does not exist or is not a regular file (a folder named `x.md`).
 */
export async function readCapped(
  file: string,
  max: number,
): Promise<string | { problem: string } | undefined> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(file, 'r');
    const st = await handle.stat();
    if (!st.isFile()) return undefined;
    if (st.size > max) return { problem: `${st.size} bytes, more than the ${max} it may have` };
    const buf = Buffer.allocUnsafe(Math.min(st.size, max) + 1);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    if (bytesRead > max) return { problem: `more than the ${max} bytes it may have` };
    return buf.subarray(0, bytesRead).toString('utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    return { problem: `cannot be read (${messageOf(e)})` };
  } finally {
    await handle?.close();
  }
}
