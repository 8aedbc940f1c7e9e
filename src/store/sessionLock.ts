import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { link, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { SessionLockedError } from './errors.ts';
import { PRIVATE_FILE } from './privateFiles.ts';

/*
 * One writer per session, across processes: a lock file `<id>.lock` holding the owner's pid.
 *
 * Why a pid file and not proper-lockfile: proper-lockfile judges staleness by mtime, so every writer
 * needs a refresh timer (a blocked event loop "compromises" the lock), and after a crash the lock stays
 * taken until it goes stale (≥ 2 s, 10 s by default) — which is exactly when people resume a session.
 * With a pid the next opener sees at once that the holder is dead (kill(pid, 0) → ESRCH) and takes
 * over, no timers involved, so a process killed with SIGKILL costs nothing. The limit: liveness is only
 * checkable on the same host, so a lock written on another host is always reported as held.
 *
 * A pid can be reused: after a crash (or a reboot) another process may get the dead writer's pid, and
 * kill(pid, 0) then says "alive". So the owner also records its process start time as the kernel
 * counts it (/proc/<pid>/stat, field 22, on Linux): a live pid whose start time differs is another
 * process, and the lock is stale. Where /proc is missing that cannot be told, and the lock is reported
 * as held with the path to remove by hand.
 *
 * The file is created complete or not at all (written to a private temp file, then hard-linked into
 * place: link fails with EEXIST like O_EXCL), so nobody ever reads a half-written owner.
 */

interface LockOwner {
  pid: number;
  host: string;
  token: string;
  at: number;
  /** Start time of the owner process in clock ticks since boot (Linux); absent where unknown. */
  start?: string;
}

/** The start time of a process from /proc/<pid>/stat, or undefined where that cannot be read. */
export function processStart(pid: number | 'self'): string | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return fields[19]; // field 22 overall: fields[0] is field 3
}

const ownStart = processStart('self');

/**
 * A zombie (killed, not yet reaped by its parent — tmux, a shell) still answers kill(pid, 0) and
 * keeps its start time, but it can never write again: its lock is stale.
 */
function isZombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' || state === 'X';
  } catch {
    return false;
  }
}

export interface SessionLock {
  readonly path: string;
  release(): Promise<void>;
}

/** A leftover break guard older than this came from a process that died mid-break. */
const BREAK_GUARD_EXPIRY_MS = 10_000;

/** Locks held by this process (path → token): lets the exit hook clean up and tells our own pid apart. */
const held = new Map<string, string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Best effort only: on SIGKILL or a signal nobody handles this never runs, and the stale-pid check
  // is what keeps such a leftover from blocking the next writer.
  process.on('exit', () => {
    for (const [path, token] of held) {
      try {
        if (readFileSync(path, 'utf8').includes(token)) unlinkSync(path);
      } catch {
        // already gone or unreadable: nothing left to release
      }
    }
    held.clear();
  });
}

function errCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null ? (e as { code?: string }).code : undefined;
}

async function tryLink(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (e) {
    if (errCode(e) === 'EEXIST') return false;
    throw e;
  }
}

async function readLockFile(
  path: string,
): Promise<{ raw: string; owner: LockOwner | undefined } | undefined> {
  let raw: string;
  try {
    raw = await readFile(path, 'utf8');
  } catch (e) {
    if (errCode(e) === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const o = JSON.parse(raw) as Partial<LockOwner>;
    const ok = typeof o.pid === 'number' && typeof o.host === 'string' && typeof o.token === 'string';
    return { raw, owner: ok ? (o as LockOwner) : undefined };
  } catch {
    return { raw, owner: undefined };
  }
}

/** `foreign`: held from another host, whose processes cannot be checked from here. */
export type HolderState = 'live' | 'dead' | 'foreign';

function holderState(owner: LockOwner): HolderState {
  if (owner.host !== hostname()) return 'foreign';
  // Our own pid: held only if a store in this process still holds that token; otherwise the file was
  // left by an earlier process that had the same pid.
  if (owner.pid === process.pid) return [...held.values()].includes(owner.token) ? 'live' : 'dead';
  try {
    process.kill(owner.pid, 0);
  } catch (e) {
    // EPERM: the process exists but belongs to someone else — still a live holder.
    if (errCode(e) === 'ESRCH') return 'dead';
  }
  if (isZombie(owner.pid)) return 'dead';
  // The pid is in use; by the owner only if it started when the owner did.
  if (owner.start !== undefined) {
    const now = processStart(owner.pid);
    if (now !== undefined && now !== owner.start) return 'dead';
  }
  return 'live';
}

function describe(owner: LockOwner | undefined): string {
  return owner
    ? `pid ${owner.pid} on ${owner.host} since ${new Date(owner.at).toISOString()}`
    : 'unknown holder';
}

/**
 * Who holds the lock at `path`: nobody (no file), a live process, a dead one (a leftover the next
 * writer takes over), or a process on another host. An unreadable owner counts as live: it may be a
 * writer of a version we do not know.
 */
export async function lockHolder(path: string): Promise<{ state: HolderState | 'none'; holder: string }> {
  const current = await readLockFile(path);
  if (!current) return { state: 'none', holder: '' };
  return {
    state: current.owner ? holderState(current.owner) : 'live',
    holder: describe(current.owner),
  };
}

/**
 * Removes a lock whose holder is dead. Two openers may find the same stale lock; without the guard the
 * slower one could delete the lock the faster one has just taken.
 */
async function breakStale(path: string, staleRaw: string, guardSource: string): Promise<void> {
  const guard = `${path}.break`;
  if (!(await tryLink(guardSource, guard))) {
    const st = await stat(guard).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > BREAK_GUARD_EXPIRY_MS) await unlink(guard).catch(() => undefined);
    return;
  }
  try {
    const now = await readLockFile(path);
    if (now?.raw === staleRaw) await unlink(path).catch(() => undefined);
  } finally {
    await unlink(guard).catch(() => undefined);
  }
}

/** Takes the writer lock of `session` at `path`, or throws SessionLockedError naming the live holder. */
export async function acquireSessionLock(path: string, session: string): Promise<SessionLock> {
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    token: randomUUID(),
    at: Date.now(),
    ...(ownStart !== undefined ? { start: ownStart } : {}),
  };
  const tmp = `${path}.${owner.token}.tmp`;
  await writeFile(tmp, `${JSON.stringify(owner)}\n`, { mode: PRIVATE_FILE });
  try {
    let last: LockOwner | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await tryLink(tmp, path)) {
        installExitHook();
        held.set(path, owner.token);
        return { path, release: () => releaseLock(path, owner.token) };
      }
      const current = await readLockFile(path);
      if (!current) continue; // released between our link and our read
      last = current.owner;
      const state = current.owner ? holderState(current.owner) : 'live';
      if (state !== 'dead')
        throw new SessionLockedError(session, describe(current.owner), path, state === 'foreign');
      await breakStale(path, current.raw, tmp);
    }
    throw new SessionLockedError(session, describe(last), path, false);
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

async function releaseLock(path: string, token: string): Promise<void> {
  if (held.get(path) !== token) return;
  held.delete(path);
  // Only remove the file if it is still ours: someone may have broken it as stale and taken it since.
  const current = await readLockFile(path);
  if (current?.owner?.token === token) await unlink(path).catch(() => undefined);
}
