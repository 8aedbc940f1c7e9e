import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { childEnv } from '../lib/secrets.ts';
import { killProcessGroup, processGroupAlive } from './processGroup.ts';
import type { RunScope } from './types.ts';

/** Unread output kept per stream of a background shell; older unread output is dropped past it. */
export const SHELL_MAX_UNREAD_CHARS = 1024 * 1024;

/** Output one BashOutput call returns at most; the rest waits for the next call. */
export const SHELL_MAX_READ_CHARS = 30_000;

/**
 * Output of one stream not read yet. Nothing is lost between reads unless more than the cap
 * piles up unread (then the oldest goes, and the next read says how much).
 */
class UnreadText {
  private chunks: string[] = [];
  private size = 0;
  dropped = 0;

  constructor(private readonly cap: number) {}

  push(s: string): void {
    this.chunks.push(s);
    this.size += s.length;
    if (this.size <= this.cap) return;
    let text = this.chunks.join('');
    const over = text.length - this.cap;
    text = text.slice(over);
    this.dropped += over;
    this.chunks = [text];
    this.size = text.length;
  }

  /** Takes up to `max` of the oldest unread characters. */
  take(max: number): { text: string; dropped: number; more: number } {
    const all = this.chunks.join('');
    const text = all.slice(0, max);
    const rest = all.slice(text.length);
    this.chunks = rest ? [rest] : [];
    this.size = rest.length;
    const dropped = this.dropped;
    this.dropped = 0;
    return { text, dropped, more: rest.length };
  }
}

export type ShellStatus = 'running' | 'completed' | 'failed' | 'killed';

export interface ShellRead {
  id: string;
  command: string;
  status: ShellStatus;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: { text: string; dropped: number; more: number };
  stderr: { text: string; dropped: number; more: number };
}

export class BackgroundShell {
  private readonly out = new UnreadText(SHELL_MAX_UNREAD_CHARS);
  private readonly err = new UnreadText(SHELL_MAX_UNREAD_CHARS);
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private killedBy: string | null = null;
  private killing: Promise<void> | null = null;
  readonly exited: Promise<void>;

  constructor(
    readonly id: string,
    readonly command: string,
    private readonly child: ChildProcess,
    private readonly killGraceMs: number,
  ) {
    child.stdout?.setEncoding('utf8').on('data', (s: string) => this.out.push(s));
    child.stderr?.setEncoding('utf8').on('data', (s: string) => this.err.push(s));
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
      child.once('error', (e) => {
        this.err.push(`${e.message}\n`);
        this.exit ??= { code: null, signal: null };
        resolve();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get status(): ShellStatus {
    if (this.killedBy) return 'killed';
    if (!this.exit) return 'running';
    return this.exit.code === 0 ? 'completed' : 'failed';
  }

  /** Why it was killed (KillShell, the run's end, an abort), once it was. */
  get killReason(): string | null {
    return this.killedBy;
  }

  /** New output since the last read; with `filter`, only the lines it matches (the others are gone). */
  read(filter?: RegExp): ShellRead {
    const pick = (t: { text: string; dropped: number; more: number }) =>
      filter
        ? {
            ...t,
            text: t.text
              .split('\n')
              .filter((l) => filter.test(l))
              .join('\n'),
          }
        : t;
    return {
      id: this.id,
      command: this.command,
      status: this.status,
      exitCode: this.exit?.code ?? null,
      signal: this.exit?.signal ?? null,
      stdout: pick(this.out.take(SHELL_MAX_READ_CHARS)),
      stderr: pick(this.err.take(SHELL_MAX_READ_CHARS)),
    };
  }

  /** Kills its whole process group (SIGTERM, then SIGKILL after the grace); resolves once it is gone. */
  kill(why: string): Promise<void> {
    if (this.killing) return this.killing;
    const pid = this.child.pid;
    const alive = pid !== undefined && processGroupAlive(pid);
    if (!alive && this.exit) return Promise.resolve();
    this.killedBy = why;
    this.killing = (pid === undefined ? Promise.resolve() : killProcessGroup(pid, this.killGraceMs))
      .catch(() => {})
      .then(() => {
        // Pipes held by a process that escaped the group (setsid) must not keep this one open.
        this.child.stdout?.destroy();
        this.child.stderr?.destroy();
      });
    return this.killing;
  }
}

const SHELLS = Symbol('backgroundShells');

/**
 * The background shells of one run (`Bash` with `run_in_background`). Each is the leader of its
 * own process group; the run's abort and the run's end kill every one still running, so no
 * process started this way outlives its run. Ids are short hashes of the call that started
 * the shell (unique in the session, the same in every replay of the log).
 */
export class BackgroundShells {
  private readonly shells = new Map<string, BackgroundShell>();

  static of(scope: RunScope): BackgroundShells {
    return scope.resource(SHELLS, (s) => new BackgroundShells(s));
  }

  private constructor(scope: RunScope) {
    const killAll = (why: string) => Promise.all([...this.shells.values()].map((s) => s.kill(why)));
    scope.signal.addEventListener('abort', () => void killAll('the run was aborted'), { once: true });
    scope.onEnd(async () => {
      await killAll('the run ended');
    });
  }

  start(
    toolUseId: string,
    command: string,
    opts: { cwd: string; env?: NodeJS.ProcessEnv; killGraceMs?: number },
  ): BackgroundShell {
    const id = shellId(toolUseId, this.shells);
    const child = spawn('bash', ['-c', command], {
      cwd: opts.cwd,
      env: opts.env ?? childEnv(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const shell = new BackgroundShell(id, command, child, opts.killGraceMs ?? 1000);
    this.shells.set(id, shell);
    return shell;
  }

  get(id: string): BackgroundShell | undefined {
    return this.shells.get(id);
  }

  ids(): string[] {
    return [...this.shells.keys()];
  }
}

function shellId(toolUseId: string, taken: ReadonlyMap<string, unknown>): string {
  const hash = createHash('sha256').update(toolUseId).digest('hex');
  for (let n = 7; ; n++) {
    const id = `bash_${hash.slice(0, n)}`;
    if (!taken.has(id)) return id;
  }
}
