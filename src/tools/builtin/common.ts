import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import path from 'node:path';
import { errnoCode, messageOf } from '../../lib/errors.ts';
import {
  type FsRoot,
  HardLinkedFileError,
  NotRegularFileError,
  OutsideRootError,
  type RootSpec,
  rootFor,
  rootFromSpec,
  UNCONFINED,
} from '../confinedFs.ts';
import { type PermissionRule, parseRules, ruleCovers, scopeGlobs } from '../permissions/rules.ts';
import type { FileReadFact, ToolContext, ToolOutput } from '../types.ts';

/**
 * Options shared by the built-in tools.
 *
 * Why a flag and not a callback into the permission layer: the policy (src/tools/permissions) is
 * the gate that decides, per call, whether a path outside cwd is allowed (only by an explicit allow
 * rule). The tools keep a second, dumb line of defence: by default they refuse outside paths
 * outright, so a session wired without a policy can never touch files outside its cwd. A session
 * that configures allow rules for outside paths builds its tools with `allowOutsideCwd: true` and
 * relies on the policy having checked every call.
 */
export interface BuiltinToolOptions {
  /**
   * Whether the tools may reach outside the working directory. A list of allow rules (what the
   * CLI passes, e.g. `['Read(/etc/hosts)', 'Bash(npm test:*)']`): only where one of the tool's own
   * path rules matches the real path of what is opened — so a symlink swapped after the policy
   * looked, or a symlinked directory met by Glob or Grep, reaches nothing the rules do not name.
   * `true`: anywhere, trusting the policy alone to have checked every path.
   */
  allowOutsideCwd?: boolean | readonly string[] | readonly PermissionRule[];
  /** How long Glob (and Grep's file listing) may list before giving up (default GLOB_TIMEOUT_MS). */
  listTimeoutMs?: number;
  /**
   * Whether a path Grep or Glob meets while walking a tree is one the permission rules withhold
   * (a Read deny or ask rule covers it; `readDeniedPredicate` in the policy makes this): never
   * opened, never listed, only counted in the result. The policy checks a call's `path` alone, so
   * without this a search over `.` would read what `Read(./secrets/**)` forbids.
   */
  readDenied?: (absPath: string) => boolean;
}

/** The result line saying how many paths the rules withheld (never which). */
export function withheldNote(n: number): string {
  return n ? `[${n} path${n === 1 ? '' : 's'} withheld by permission rules]` : '';
}

export function toolError(message: string): ToolOutput {
  return { content: message, isError: true };
}

export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

export function fileFact(absolute: string, data: Buffer | string, stats: Stats): FileReadFact {
  return { path: absolute, sha256: sha256(data), mtimeMs: stats.mtimeMs };
}

/** A path argument of a tool, resolved lexically; what it really is gets checked when it is opened. */
export interface ToolPath {
  absolute: string;
  /** Relative to cwd with `/` separators when lexically inside it, else absolute: what messages show. */
  display: string;
  root: FsRoot;
}

const ruleSpecs = new WeakMap<readonly (string | PermissionRule)[], Map<string, RootSpec['rules']>>();

/**
 * The path rules among `rules` that speak about the tool (its own, `Read(...)` for the readers,
 * `Edit(...)` for the writers), as a root's rules (parsed once per list and tool).
 */
function outsideRules(rules: readonly string[] | readonly PermissionRule[], tool: string): RootSpec['rules'] {
  let byTool = ruleSpecs.get(rules);
  if (!byTool) {
    byTool = new Map();
    ruleSpecs.set(rules, byTool);
  }
  let found = byTool.get(tool);
  if (!found) {
    const parsed = rules.map((r) => (typeof r === 'string' ? parseRules([r])[0]! : r));
    found = parsed.flatMap((r) =>
      ruleCovers(r.tool, tool) && r.kind === 'path' ? scopeGlobs(r.scopes) : [],
    );
    byTool.set(tool, found);
  }
  return found;
}

const rootsByRules = new WeakMap<NonNullable<RootSpec['rules']>, Map<string, FsRoot>>();

/** The root for cwd plus the outside paths `rules` name, compiled once per cwd. */
function rootWithRules(real: string, rules: NonNullable<RootSpec['rules']>): FsRoot {
  let byReal = rootsByRules.get(rules);
  if (!byReal) {
    byReal = new Map();
    rootsByRules.set(rules, byReal);
  }
  let root = byReal.get(real);
  if (!root) {
    root = rootFromSpec({ real, rules });
    byReal.set(real, root);
  }
  return root;
}

export async function toolPath(
  ctx: ToolContext,
  given: string,
  opts: BuiltinToolOptions,
  tool: string,
): Promise<ToolPath> {
  const absolute = path.resolve(ctx.cwd, given);
  const rel = path.relative(path.resolve(ctx.cwd), absolute);
  const display =
    rel === ''
      ? '.'
      : rel.startsWith('..') || path.isAbsolute(rel)
        ? absolute
        : rel.split(path.sep).join('/');
  const outside = opts.allowOutsideCwd;
  if (outside === true) return { absolute, display, root: UNCONFINED };
  const root = await rootFor(ctx.cwd);
  if (!outside) return { absolute, display, root };
  const rules = outsideRules(outside, tool);
  if (!rules?.length) return { absolute, display, root };
  return { absolute, display, root: rootWithRules(root.real, rules) };
}

export function outsideMessage(ctx: ToolContext, given: string, real: string): string {
  return (
    `Path ${JSON.stringify(given)} resolves outside the working directory (${real}); ` +
    `only paths inside ${ctx.cwd} are allowed.`
  );
}

/**
 * The is_error result for a failed open: outside the root, not a regular file, missing, or any
 * system error (ENAMETOOLONG, ELOOP, EACCES…). Never thrown on: one bad path is one bad call.
 */
export function openFailure(
  ctx: ToolContext,
  given: string,
  p: ToolPath,
  e: unknown,
  verb: 'read' | 'write' | 'search',
): ToolOutput {
  if (e instanceof OutsideRootError) return toolError(outsideMessage(ctx, given, e.real));
  if (e instanceof NotRegularFileError) {
    if (e.kind === 'directory') {
      return toolError(
        verb === 'write'
          ? `${p.display} is a directory; give a file path.`
          : `${p.display} is a directory, not a file. Use Glob to list its files.`,
      );
    }
    return toolError(`${p.display} is a ${e.kind}, not a regular file; ${verb} works on regular files only.`);
  }
  if (e instanceof HardLinkedFileError) {
    return toolError(
      `${p.display} has ${e.links} hard links: changing it in place would change the same file under its ` +
        'other names, which may be outside the working directory. Write a file under a new name instead.',
    );
  }
  const code = errnoCode(e);
  if (code === 'ENOENT') return toolError(`File does not exist: ${clipPath(p.display)}`);
  // Node's messages repeat the whole path; a 5 000-character one would swamp the result.
  const why = code && ERRNO_TEXT[code] ? `${ERRNO_TEXT[code]} (${code})` : messageOf(e);
  return toolError(`Cannot ${verb} ${clipPath(p.display)}: ${why}`);
}

const ERRNO_TEXT: Record<string, string> = {
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many levels of symbolic links',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  ENXIO: 'no such device or address (a socket?)',
};

function clipPath(p: string): string {
  return p.length > 200 ? `${p.slice(0, 200)}…` : p;
}

/** True when the first 8 KiB contain a NUL byte: the usual "this is not text" heuristic (git, grep). */
export function looksBinary(data: Buffer): boolean {
  return data.subarray(0, 8192).includes(0);
}

/** `cat -n` style: line number right-aligned in 6 columns, a tab, the line. */
export function numberLine(lineNo: number, text: string): string {
  return `${String(lineNo).padStart(6)}\t${text}`;
}

/** Splits text into lines (LF or CRLF); a final newline does not make an extra empty line. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split(/\r?\n/);
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Whether `absolute` may be changed: it must have been read in this session and be unchanged
 * since. The content hash is the authority; the mtime alone lies both ways (coarse clocks, touch).
 */
export function staleReason(
  ctx: ToolContext,
  absolute: string,
  display: string,
  current: Buffer,
): string | undefined {
  const fact = ctx.session.fileRead(absolute);
  if (!fact) {
    return `File ${display} exists but has not been read in this session. Read it first, then retry.`;
  }
  if (fact.sha256 !== sha256(current)) {
    return (
      `File ${display} has changed since it was last read (by the user, a formatter or a command). ` +
      `Read it again before changing it.`
    );
  }
  return undefined;
}
