import path from 'node:path';
import { isWithin } from './paths.ts';

/**
 * Paths inside the working directory that a file tool may change only with a rule naming them.
 *
 * Files here are read by programs the user allows on their own as harmless: git reads
 * `.git/config` on every `git status` (`core.fsmonitor` runs a command), `.git/hooks/*` on a
 * commit, `.gitmodules` on `git submodule update` (`update = !cmd`); npm reads `.npmrc`
 * (`script-shell`, `node-options`) on `npm test`; editors and direnv run what `.vscode`, `.idea`
 * or `.envrc` say; `.claude` holds settings and hooks; `.reloop` is the session store (the log
 * the model's own history is kept in). So `acceptEdits` (or `bypassPermissions`) plus an allow
 * rule like `Bash(git status)` would let a model run any command by first writing one of these.
 * A change to them is asked, in every mode, unless an allow rule names the directory or file
 * itself (`Edit(.git/hooks/**)`, not `Edit(**)`) — the Claude Code convention.
 */
export const PROTECTED_DIRS: readonly string[] = ['.git', '.claude', '.reloop', '.vscode', '.idea', '.husky'];

export const PROTECTED_FILES: readonly string[] = [
  '.gitmodules',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.envrc',
  '.mcp.json',
  '.pre-commit-config.yaml',
  'lefthook.yml',
];

/**
 * The protected name a path falls under (`.git`, `.npmrc`), or undefined. `relative` is relative
 * to the working directory, `/`-separated; `real` is checked against the extra absolute
 * directories (`extra`, e.g. a store given with `--store`), reported by their base name.
 */
export function protectedName(
  relative: string,
  real?: string,
  extra: readonly string[] = [],
): string | undefined {
  if (real !== undefined) {
    for (const dir of extra) if (isWithin(dir, real)) return path.basename(dir);
  }
  if (relative === '.' || relative.startsWith('../')) return undefined;
  // Lower case: on a case-insensitive file system (macOS, Windows) `.GIT/config` is `.git/config`.
  const segments = relative.toLowerCase().split('/');
  const dir = segments.slice(0, -1).find((s) => PROTECTED_DIRS.includes(s));
  if (dir) return dir;
  const last = segments[segments.length - 1] as string;
  if (PROTECTED_DIRS.includes(last) || PROTECTED_FILES.includes(last)) return last;
  return undefined;
}
