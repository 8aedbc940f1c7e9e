import { execFile } from 'node:child_process';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { childEnv } from '../lib/secrets.ts';
import { isWithin, rootRealPath, toPosix } from './paths.ts';

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

/**
 * What makes a directory a git repository by itself (git's `is_git_directory`): a `HEAD`, and
 * `objects/` and `refs/` — or a `commondir` file naming where those are. A folder with them is
 * found by git's discovery as a bare repository, whose `config` and hooks then run for `git
 * status` or `git fetch` in it (`safe.bareRepository=explicit`, src/lib/gitGuard.ts, is the
 * other half of this).
 */
const GIT_DIR_PARTS = ['head', 'objects', 'refs', 'commondir'] as const;

async function present(p: string): Promise<boolean> {
  try {
    await stat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The paths a policy has let file tools change, with every directory above them, so that the
 * calls of one batch (all admitted before any runs) and parallel sub-agents see each other's
 * writes: `HEAD`, `objects/info/keep` and `refs/heads/keep` asked for together complete a
 * repository as surely as one after the other. A path is noted before its own check, so of two
 * checks racing each other the later one sees both.
 */
export class WrittenPaths {
  private readonly paths = new Set<string>();

  /** Notes `relative` (inside the working directory, `/`-separated) and its parent directories. */
  add(relative: string): void {
    const segments = relative.toLowerCase().split('/');
    for (let k = 1; k <= segments.length; k++) this.paths.add(segments.slice(0, k).join('/'));
  }

  /** Whether `relative` was noted, or something under it. */
  has(relative: string): boolean {
    return this.paths.has(relative.toLowerCase());
  }
}

/**
 * The directory (relative to `root`, `.` for root itself) that writing `relative` would make a
 * git repository, or change while it is one; undefined when there is none. Every directory from
 * `root` down to the file's own is looked at, with what the write itself would create (and what
 * the calls let through before it did: `written`) counted as there: whichever of `HEAD`, `objects/…`, `refs/…` is written last completes the repository,
 * and once it is one every write under it (`config`, `hooks/…`) changes it. A file named
 * `config` (or `HEAD`) anywhere else stays an ordinary file. Names are compared without case,
 * as a case-insensitive file system would.
 */
export async function gitDirectoryWrite(
  root: string,
  relative: string,
  written: WrittenPaths = new WrittenPaths(),
): Promise<string | undefined> {
  if (relative === '.' || relative.startsWith('../')) return undefined;
  const segments = relative.split('/');
  for (let j = 0; j < segments.length; j++) {
    const dir = path.join(root, ...segments.slice(0, j));
    const below = (segments[j] as string).toLowerCase();
    const at = (part: string) => [...segments.slice(0, j), part].join('/');
    const has = await Promise.all(
      GIT_DIR_PARTS.map(
        (part) =>
          below === part || written.has(at(part)) || present(path.join(dir, part === 'head' ? 'HEAD' : part)),
      ),
    );
    const [head, objects, refs, commondir] = has;
    if (head && ((objects && refs) || commondir)) return segments.slice(0, j).join('/') || '.';
  }
  return undefined;
}

/**
 * The hooks directory git uses in `cwd` (`core.hooksPath`, else `.git/hooks`), as an absolute
 * path; undefined outside a repository or without git. A project whose hooks path is a folder of
 * the tree (`core.hooksPath = .githooks`) runs what is there on `git commit`: it is protected
 * like `.git/hooks`.
 */
export function gitHooksDir(cwd: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['rev-parse', '--git-path', 'hooks'],
      { cwd, env: childEnv(), timeout: 5000, encoding: 'utf8' },
      (err, stdout) => resolve(err || stdout.trim() === '' ? undefined : path.resolve(cwd, stdout.trim())),
    );
  });
}

/**
 * The hooks directory to protect besides the built-in names: git's hooks directory in `cwd` when
 * it is a folder of the tree that no protected name covers already (`.githooks`, `scripts/hooks`).
 */
export async function projectHooksDir(cwd: string): Promise<string | undefined> {
  const dir = await gitHooksDir(cwd);
  if (dir === undefined) return undefined;
  const [root, real] = await Promise.all([rootRealPath(cwd), rootRealPath(dir).catch(() => dir)]);
  const relative = toPosix(path.relative(root, real));
  if (!isWithin(root, real) || relative === '' || protectedName(relative) !== undefined) return undefined;
  return real;
}

export interface ProtectedWrite {
  /** The protected name a rule must name to allow it (`.git`, `.npmrc`, `HEAD`, `objects`…). */
  name: string;
  /** Why, for the question asked. */
  why: string;
}

/**
 * Whether a change to `relative` (real path `real`, inside the real root `root`) touches a
 * protected path: a protected name, an `extra` directory, or a folder it would make a git
 * repository.
 */
export async function protectedWrite(
  root: string,
  relative: string,
  real: string,
  extra: readonly string[] = [],
  written?: WrittenPaths,
): Promise<ProtectedWrite | undefined> {
  const name = protectedName(relative, real, extra);
  if (name !== undefined) {
    return {
      name,
      why:
        `It is under ${name}, a protected path: what is there can make git, npm, an editor or reloop ` +
        'run commands or change its records.',
    };
  }
  const repo = await gitDirectoryWrite(root, relative, written);
  if (repo === undefined) return undefined;
  const part = relative.slice(repo === '.' ? 0 : repo.length + 1).split('/')[0] as string;
  return {
    name: part,
    why:
      `It would make ${repo === '.' ? 'the working directory' : repo} a git repository (HEAD, objects/, refs/), ` +
      'or change one: git run there reads its config and runs its hooks.',
  };
}
