import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';

/**
 * `mkdir -p` that cannot hang. Node's recursive mkdir loops forever under a directory that
 * exists but refuses new entries with ENOENT (anything under `/proc`); here the missing levels
 * are found by walking up with `stat`, then made one by one with a plain mkdir, which fails at
 * once with the path and the errno. `mode`: for every level it makes (one that exists keeps its own).
 */
export async function makeDirs(dir: string, { mode }: { mode?: number } = {}): Promise<void> {
  const missing: string[] = [];
  let at = path.resolve(dir);
  while (true) {
    const st = await stat(at).catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    });
    if (st) {
      if (!st.isDirectory())
        throw Object.assign(new Error(`ENOTDIR: not a directory, mkdir '${at}'`), {
          code: 'ENOTDIR',
          path: at,
        });
      break;
    }
    missing.push(at);
    const parent = path.dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const level of missing.reverse()) {
    try {
      await mkdir(level, mode === undefined ? undefined : { mode });
    } catch (e) {
      // Made by someone else in between: as good as made by us.
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
