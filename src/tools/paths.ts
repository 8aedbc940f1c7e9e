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
export async function realPathOf(p: string, hops = 0): Promise<string> {
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

export function isWithin(root: string, p: string): boolean {
  if (p === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return p.startsWith(prefix);
}

export function toPosix(p: string): string {
  return path.sep === '/' ? p : p.split(path.sep).join('/');
}

const rootCache = new Map<string, Promise<string>>();
const ROOT_CACHE_MAX = 64;

/**
 * The real path of a working directory, resolved once per process and directory rather than on
 * every call (it was a realpath walk per tool call). Caching is safe: the tools verify what they
 * actually opened against this value, so a directory swapped after the first call only makes them
 * refuse, never reach further.
 */
export function rootRealPath(cwd: string): Promise<string> {
  const abs = path.resolve(cwd);
  let real = rootCache.get(abs);
  if (!real) {
    if (rootCache.size >= ROOT_CACHE_MAX) rootCache.delete(rootCache.keys().next().value as string);
    real = realPathOf(abs);
    rootCache.set(abs, real);
    // A failure (EACCES on a parent) is not remembered: the next call asks again.
    real.catch(() => rootCache.delete(abs));
  }
  return real;
}

/**
 * Resolves a path given by the user or the model against `cwd` and says whether it really stays
 * inside it: `..` escapes, absolute paths elsewhere and symlinks pointing out are all `inside: false`.
 * Answers about the moment it looked: the tools re-check what they open (src/tools/confinedFs.ts).
 */
export async function resolveInCwd(cwd: string, given: string): Promise<ResolvedPath> {
  const absolute = path.resolve(cwd, given);
  const [realCwd, real] = await Promise.all([rootRealPath(cwd), realPathOf(absolute)]);
  const inside = isWithin(realCwd, real);
  return { absolute, real, relative: toPosix(path.relative(realCwd, real)) || '.', inside };
}
