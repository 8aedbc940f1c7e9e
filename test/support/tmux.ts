/**
 * A real pseudo-terminal for the interactive session's tests: a tmux server of the test's own
 * (its own socket, killed afterwards), one window running the CLI, driven by `send-keys` and
 * read by `capture-pane`. Screen states are polled for (never a fixed sleep): the host is slow.
 *
 *   const t = await Tmux.start(['chat', '--store', 'st'], { cwd, env });
 *   await t.type('hello'); await t.keys('Enter');
 *   await t.waitFor((s) => s.includes('✓ completed'));
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { CLI_BIN, scratchHomeEnv } from './cli.ts';

const run = promisify(execFile);
let counter = 0;

export interface TmuxOptions {
  cwd: string;
  env?: Record<string, string>;
  width?: number;
  height?: number;
}

export class Tmux {
  private constructor(
    private readonly socket: string,
    readonly name: string,
  ) {}

  /** Starts `node bin/reloop.js <args>` in a new detached session; the pane stays after the process ends. */
  static async start(args: readonly string[], opts: TmuxOptions): Promise<Tmux> {
    const socket = `reloop-test-${process.pid}-${++counter}`;
    const t = new Tmux(socket, 'chat');
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? tmpdir(),
      LANG: 'C.UTF-8',
      TERM: 'xterm-256color',
      ...scratchHomeEnv(),
      ...opts.env,
    };
    const envArgs = Object.entries(env).map(([k, v]) => `${k}=${shellQuote(v)}`);
    const command = `exec env -i ${envArgs.join(' ')} ${shellQuote(process.execPath)} ${shellQuote(CLI_BIN)} ${args.map(shellQuote).join(' ')}`;
    await t.tmux(
      'new-session',
      '-d',
      '-s',
      t.name,
      '-x',
      String(opts.width ?? 120),
      '-y',
      String(opts.height ?? 40),
      '-c',
      opts.cwd,
      command,
    );
    await t.tmux('set-option', '-t', t.name, 'remain-on-exit', 'on');
    await t.tmux('set-option', '-t', t.name, 'history-limit', '20000');
    return t;
  }

  async tmux(...args: string[]): Promise<string> {
    const { stdout } = await run('tmux', ['-L', this.socket, '-f', '/dev/null', ...args], {
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  }

  /** Types text literally (each character as a key). */
  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', this.name, '-l', text);
  }

  /** Named keys: `Enter`, `Escape`, `C-c`, `C-d`, `Up`. */
  async keys(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', this.name, ...keys);
  }

  /** Raw bytes, in hex (`ff`, `fe`): what a terminal that is not UTF-8 would send. */
  async bytes(...hex: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', this.name, '-H', ...hex);
  }

  /** Pastes `text` as a terminal does (bracketed, when the program asked for it). */
  async paste(text: string): Promise<void> {
    const file = path.join(tmpdir(), `${this.socket}-paste.txt`);
    await writeFile(file, text);
    await this.tmux('load-buffer', '-b', 'p', file);
    await this.tmux('paste-buffer', '-p', '-d', '-b', 'p', '-t', this.name);
  }

  async resize(width: number, height: number): Promise<void> {
    await this.tmux('resize-window', '-t', this.name, '-x', String(width), '-y', String(height));
  }

  /** What the screen shows (with the scrollback), trailing blank lines dropped. */
  async screen(): Promise<string> {
    const text = await this.tmux('capture-pane', '-p', '-t', this.name, '-S', '-20000');
    return text.replace(/\s+$/, '');
  }

  /** Only the visible rows. */
  async visible(): Promise<string> {
    return (await this.tmux('capture-pane', '-p', '-t', this.name)).replace(/\s+$/, '');
  }

  /** The process in the pane (the CLI: it was exec'd). */
  async pid(): Promise<number> {
    return Number((await this.tmux('list-panes', '-t', this.name, '-F', '#{pane_pid}')).trim());
  }

  async dead(): Promise<boolean> {
    return (await this.tmux('list-panes', '-t', this.name, '-F', '#{pane_dead}')).trim() === '1';
  }

  /** Polls the screen until `pred` holds; fails with the screen after `timeoutMs`. */
  async waitFor(
    pred: (screen: string) => boolean,
    what = 'the expected screen',
    timeoutMs = 90_000,
  ): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    for (;;) {
      last = await this.screen();
      if (pred(last)) return last;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the screen:\n${last}`);
      await new Promise((r) => setTimeout(r, 150));
    }
  }

  /** Waits until `ends` runs have printed their end line (✓/✗ at the start of a line) and the prompt is back. */
  async waitForIdle(ends: number): Promise<string> {
    return this.waitFor(
      (s) => s.split('\n').filter((l) => /^[✓✗] /.test(l)).length >= ends && /(^|\n)>$/.test(s),
      `${ends} run(s) ended and the prompt back`,
    );
  }

  async kill(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
  }
}

function shellQuote(s: string): string {
  return /^[A-Za-z0-9_\-./=:@%+,]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}
