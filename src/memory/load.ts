import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { readCapped } from '../lib/readCapped.ts';
import { homeDir, userClaudeDir } from '../settings/sources.ts';
import { importPaths } from './imports.ts';

/** Which Claude Code memory a file is: the user's, the project's (checked in), or local (private). */
export type MemorySource = 'user' | 'project' | 'local';

/** One memory file as it was read: what `memory.loaded` records, and what the model is given. */
export interface MemoryFile {
  path: string;
  source: MemorySource;
  content: string;
  /** The file whose `@path` import brought this one in. */
  importedBy?: string;
}

export interface LoadMemoryOptions {
  /** The working directory: its CLAUDE.md files, and its parents' up to the repository root. */
  cwd: string;
  /** Which memory is read: `user` (~/.claude/CLAUDE.md), `project` (CLAUDE.md, .claude/CLAUDE.md), `local` (CLAUDE.local.md). */
  sources: readonly MemorySource[];
  /** The user's Claude directory (default: `userClaudeDir()`, which honours RELOOP_HOME). */
  userDir?: string;
  /** What `~/` in an import means (default: `homeDir()`, which honours RELOOP_HOME). */
  home?: string;
}

export interface LoadedMemory {
  files: MemoryFile[];
  /** What was not read, and why (a cycle, too deep, outside the project, too large). */
  warnings: string[];
}

/** Imports nest at most this deep (Claude Code's five hops). */
export const MAX_IMPORT_DEPTH = 5;
/** A memory file larger than this is not read. */
export const MAX_MEMORY_FILE_BYTES = 512 * 1024;

/**
 * CLAUDE.md memory as Claude Code loads it, lowest priority first (the model reads later files
 * as the more specific): the user's `~/.claude/CLAUDE.md`, then from the repository root down to
 * the working directory each folder's `CLAUDE.md`, `.claude/CLAUDE.md` and `CLAUDE.local.md`.
 * Each file is followed by what it imports (`@path`, relative to it, `~/` or absolute; five deep;
 * a cycle is refused with a warning). A file of a checkout (project or local, or imported by one)
 * must really be inside the repository: a symlink or an import reaching out of it (`@~/.ssh/…`) is
 * not read — a checkout is not trusted to choose what of the machine the model sees.
 */
export async function loadMemory(opts: LoadMemoryOptions): Promise<LoadedMemory> {
  const loader = new Loader(opts.home ?? homeDir());
  const cwd = path.resolve(opts.cwd);
  const want = new Set(opts.sources);
  if (want.has('user')) {
    const dir = opts.userDir ?? userClaudeDir();
    await loader.root(path.join(dir, 'CLAUDE.md'), 'user', null);
  }
  if (want.has('project') || want.has('local')) {
    const root = await repositoryRoot(cwd);
    const inside = await realpath(root).catch(() => root);
    for (const dir of foldersDown(root, cwd)) {
      if (want.has('project')) {
        await loader.root(path.join(dir, 'CLAUDE.md'), 'project', inside);
        await loader.root(path.join(dir, '.claude', 'CLAUDE.md'), 'project', inside);
      }
      if (want.has('local')) await loader.root(path.join(dir, 'CLAUDE.local.md'), 'local', inside);
    }
  }
  return { files: loader.files, warnings: loader.warnings };
}

class Loader {
  readonly files: MemoryFile[] = [];
  readonly warnings: string[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly home: string) {}

  root(file: string, source: MemorySource, confinedTo: string | null): Promise<void> {
    return this.read(file, source, confinedTo, [], undefined, undefined);
  }

  /** `chain`: the real paths of the files whose imports led here (a cycle is one of them again). */
  private async read(
    file: string,
    source: MemorySource,
    confinedTo: string | null,
    chain: readonly string[],
    importedBy: string | undefined,
    asWritten: string | undefined,
  ): Promise<void> {
    const real = await realpath(file).catch(() => null);
    const what = importedBy ? `import @${asWritten} in ${importedBy}` : `memory file ${file}`;
    if (real === null) {
      // A missing CLAUDE.md is normal; a missing import that names a path is worth a word
      // (a bare `@name` is more likely a mention than an import).
      if (importedBy && asWritten?.includes('/')) this.warnings.push(`${what}: no such file; not read`);
      return;
    }
    if (chain.includes(real)) {
      this.warnings.push(`${what}: an import cycle (${[...chain, real].join(' → ')}); not followed`);
      return;
    }
    if (chain.length > MAX_IMPORT_DEPTH) {
      this.warnings.push(`${what}: imports nest more than ${MAX_IMPORT_DEPTH} deep; not read`);
      return;
    }
    if (confinedTo !== null && real !== confinedTo && !real.startsWith(`${confinedTo}${path.sep}`)) {
      this.warnings.push(`${what}: ${real} is outside the repository ${confinedTo}; not read`);
      return;
    }
    if (this.seen.has(real)) return;
    if (
      !(await stat(real).then(
        (s) => s.isFile(),
        () => false,
      ))
    )
      return;
    this.seen.add(real);
    const text = await readCapped(real, MAX_MEMORY_FILE_BYTES);
    if (text === undefined) return;
    if (typeof text !== 'string') {
      this.warnings.push(`${what}: ${text.problem}; not read`);
      return;
    }
    if (text.includes('\0')) {
      this.warnings.push(`${what}: not a text file; not read`);
      return;
    }
    this.files.push({ path: file, source, content: text, ...(importedBy ? { importedBy } : {}) });
    for (const p of importPaths(text)) {
      const target = p.startsWith('~/')
        ? path.join(this.home, p.slice(2))
        : path.resolve(path.dirname(file), p);
      await this.read(target, source, confinedTo, [...chain, real], file, p);
    }
  }
}

/** The nearest folder at or above `cwd` holding `.git` (a folder or a worktree's file); else `cwd`. */
async function repositoryRoot(cwd: string): Promise<string> {
  for (let dir = cwd; ; ) {
    if (
      await stat(path.join(dir, '.git')).then(
        () => true,
        () => false,
      )
    )
      return dir;
    const up = path.dirname(dir);
    if (up === dir) return cwd;
    dir = up;
  }
}

/** `root`, then each folder below it down to `cwd` (cwd last). */
function foldersDown(root: string, cwd: string): string[] {
  const out: string[] = [];
  for (let dir = cwd; ; dir = path.dirname(dir)) {
    out.push(dir);
    if (dir === root || path.dirname(dir) === dir) break;
  }
  return out.reverse();
}
