import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

export interface ResolvedPath {
  /** The path resolved lexically against cwd: what the tool opens and what file facts are keyed by. */
  absolute: string;
  /** Where it really lands once every symlink is followed (for a new file: its real parent + the rest). */
  real: string;
  /**
   * Relative to the real cwd, from the real path, with `/` separators ('.' for cwd itself). Permission
   * rules match this, so `src/**` cannot reach through a symlink `src/link -> /etc`.
   */
  relative: string;
  inside: boolean;
}

const MAX_LINK_HOPS = 40;

function isErrno(e: unknown, ...codes: string[]): boolean {
  return typeof e === 'object' && e !== null && codes.includes(String((e as { code?: unknown }).code));
}

/**
 * Real path of `p`, which may not exist yet. realpath() only works on existing paths, so we walk up
 * to the deepest existing ancestor and re-append the missing tail. A dangling symlink on the way
 * (`link -> /outside/new-file`) is followed by hand: writing through it would create the target.
 */
async function realPathOf(p: string, hops = 0): Promise<string> {
  try {
    return await realpath(p);
  } catch (e) {
    // ELOOP too: any real access through a loop fails anyway, so only the lexical location matters.
    if (!isErrno(e, 'ENOENT', 'ENOTDIR', 'ELOOP')) throw e;
  }
  if (hops < MAX_LINK_HOPS) {
    const st = await lstat(p).catch(() => undefined);
    if (st?.isSymbolicLink()) {
      const target = path.resolve(path.dirname(p), await readlink(p));
      return realPathOf(target, hops + 1);
    }
  }
  const parent = path.dirname(p);
  if (parent === p) return p;
  return path.join(await realPathOf(parent, hops), path.basename(p));
}

function isWithin(root: string, p: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

function toPosix(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}

/**
 * Resolves a path given by the user or the model against `cwd` and says whether it really stays
 * inside it: `..` escapes, absolute paths elsewhere and symlinks pointing out are all `inside: false`.
 */
export async function resolveInCwd(cwd: string, given: string): Promise<ResolvedPath> {
  const absCwd = path.resolve(cwd);
  const absolute = path.resolve(absCwd, given);
  const [realCwd, real] = await Promise.all([realPathOf(absCwd), realPathOf(absolute)]);
  const inside = isWithin(realCwd, real);
  return { absolute, real, relative: toPosix(path.relative(realCwd, real)) || '.', inside };
}
