import { createHash } from 'node:crypto';
import type { Stats } from 'node:fs';
import { type ResolvedPath, resolveInCwd } from '../paths.ts';
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
  allowOutsideCwd?: boolean;
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

export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : undefined;
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Resolves a tool path argument; an `error` output when it leaves cwd (and that is not allowed). */
export async function resolveToolPath(
  ctx: ToolContext,
  given: string,
  opts: BuiltinToolOptions,
): Promise<{ path: ResolvedPath } | { error: ToolOutput }> {
  const resolved = await resolveInCwd(ctx.cwd, given);
  if (!resolved.inside && !opts.allowOutsideCwd) {
    return {
      error: toolError(
        `Path ${JSON.stringify(given)} resolves outside the working directory (${resolved.real}); ` +
          `only paths inside ${ctx.cwd} are allowed.`,
      ),
    };
  }
  return { path: resolved };
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
