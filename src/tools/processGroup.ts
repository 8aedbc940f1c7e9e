import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { errnoCode } from '../lib/errors.ts';
import { childEnv } from '../lib/secrets.ts';
import { HeadTailBuffer } from './outputBuffer.ts';

export interface GroupRunOptions {
  cwd: string;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Written to the command's stdin, then closed. Without it stdin is /dev/null (no prompt can hang). */
  stdin?: string;
  /** Default: this process's environment without its secrets (childEnv in src/lib/secrets.ts). */
  env?: NodeJS.ProcessEnv;
  /** Cap per output buffer (stdout and stderr, or the one combined buffer). */
  maxOutputChars: number;
  /** Interleave stdout and stderr in arrival order into `stdout` (what a terminal would show). */
  combineOutput?: boolean;
  /** SIGTERM → SIGKILL delay when the group has to be killed. */
  killGraceMs?: number;
  /**
   * After the shell exits, how long background jobs may keep its stdout/stderr open before the
   * group is killed. Without this a stray `cmd &` would hold the call until the timeout.
   */
  lingerMs?: number;
}

export interface GroupRunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  truncatedChars: number;
  timedOut: boolean;
  aborted: boolean;
  /** The shell had exited but background jobs still held its output open and were killed. */
  killedLingering: boolean;
  spawnError?: Error;
  pid?: number;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Whether any process of the group is still running (zombies do not count). */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return errnoCode(e) === 'EPERM';
  }
  // kill(0) also succeeds for zombies nobody reaped yet (in some containers PID 1 never reaps
  // orphans), so on Linux look at the actual process states.
  if (process.platform !== 'linux') return true;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // Format: `pid (comm) state ppid pgrp …`; comm may itself contain spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
  }
  return false;
}

function signalGroup(pgid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pgid, sig);
  } catch (e) {
    if (errnoCode(e) !== 'ESRCH') throw e;
  }
}

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!processGroupAlive(pgid)) return true;
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
}

/** SIGTERM the whole group, SIGKILL whatever is left after the grace; resolves once it is gone. */
export async function killProcessGroup(pgid: number, graceMs = 1000): Promise<void> {
  signalGroup(pgid, 'SIGTERM');
  if (await waitGone(pgid, graceMs)) return;
  signalGroup(pgid, 'SIGKILL');
  await waitGone(pgid, 2000);
}

/**
 * Runs `bash -c command` as the leader of a new process group, so that a timeout or an abort can
 * kill everything it started (pipelines, `&` jobs) and leave no orphan behind. Never rejects.
 */
export function runInProcessGroup(command: string, opts: GroupRunOptions): Promise<GroupRunResult> {
  const out = new HeadTailBuffer(opts.maxOutputChars);
  const err = opts.combineOutput ? out : new HeadTailBuffer(opts.maxOutputChars);
  const grace = opts.killGraceMs ?? 1000;
  let timedOut = false;
  let aborted = false;
  let killedLingering = false;
  let spawnError: Error | undefined;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn('bash', ['-c', command], {
        cwd: opts.cwd,
        env: opts.env ?? childEnv(),
        detached: true,
        stdio: [opts.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      });
    } catch (e) {
      resolve(result(e instanceof Error ? e : new Error(String(e))));
      return;
    }
    const pid = child.pid;
    let killing: Promise<void> | undefined;
    let done = false;
    let lingerTimer: NodeJS.Timeout | undefined;
    let closeFallback: NodeJS.Timeout | undefined;

    function result(spawnErr?: Error): GroupRunResult {
      return {
        exitCode: exit?.code ?? null,
        signal: exit?.signal ?? null,
        stdout: out.toString(),
        stderr: opts.combineOutput ? '' : err.toString(),
        truncatedChars: out.droppedChars + (opts.combineOutput ? 0 : err.droppedChars),
        timedOut,
        aborted,
        killedLingering,
        spawnError: spawnErr ?? spawnError,
        pid,
      };
    }

    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      clearTimeout(lingerTimer);
      clearTimeout(closeFallback);
      opts.signal?.removeEventListener('abort', onAbort);
      // Resolve only once the group is gone, so callers may rely on "no process left".
      void (killing ?? Promise.resolve()).then(() => resolve(result()));
    };

    const terminate = () => {
      if (killing || done) return;
      killing = pid === undefined ? Promise.resolve() : killProcessGroup(pid, grace).catch(() => {});
      // A process that escaped the group (setsid) may still hold the pipes: stop waiting for them.
      void killing.then(() => {
        if (done) return;
        closeFallback = setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish();
        }, 500);
      });
    };

    const onAbort = () => {
      aborted = true;
      terminate();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, opts.timeoutMs);

    child.stdout?.setEncoding('utf8').on('data', (s: string) => out.push(s));
    child.stderr?.setEncoding('utf8').on('data', (s: string) => err.push(s));
    if (opts.stdin !== undefined && child.stdin) {
      // A command that never reads stdin closes the pipe early: EPIPE is expected, not a failure.
      child.stdin.on('error', () => {});
      child.stdin.end(opts.stdin);
    }
    child.on('error', (e) => {
      spawnError = e;
      finish();
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      if (killing) return;
      lingerTimer = setTimeout(() => {
        killedLingering = true;
        terminate();
      }, opts.lingerMs ?? 1000);
    });
    child.on('close', finish);

    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener('abort', onAbort, { once: true });
  });
}
