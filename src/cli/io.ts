import path from 'node:path';
import type { Command } from 'commander';
import { type FileEventStore, openFileStore, type StoreWarning } from '../store/fileStore.ts';

/** Exit codes of every command: 0 success, 1 a failed check or run, 2 bad usage. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

export class UsageError extends Error {
  readonly code = 'USAGE';
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure the command already explained; exits 1 without a stack trace. */
export class CommandFailed extends Error {
  readonly code = 'FAILED';
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
  ) {
    super(message);
    this.name = 'CommandFailed';
  }
}

export interface GlobalOptions {
  store?: string;
  json?: boolean;
}

/** `--store`, else RELOOP_STORE, else ./.reloop — resolved against the current directory. */
export function storeDir(opts: GlobalOptions): string {
  return path.resolve(opts.store ?? process.env.RELOOP_STORE ?? '.reloop');
}

export async function openStore(
  opts: GlobalOptions,
  /** Warnings not worth a line here (`serve` reads logs while they are written: torn tails are normal). */
  quiet: readonly StoreWarning['code'][] = [],
): Promise<FileEventStore> {
  const dir = storeDir(opts);
  try {
    return await openFileStore(dir, {
      // A person reads this: the warning's own sentence (it names the file and line), not its JSON.
      onWarning: (w) => {
        if (!quiet.includes(w.code))
          process.stderr.write(`warning: ${typeof w === 'string' ? w : w.message}\n`);
      },
    });
  } catch (e) {
    const code = (e as { code?: string }).code;
    if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'EACCES' || code === 'EROFS') {
      throw new CommandFailed(`--store ${dir}: not a usable store directory (${code})`);
    }
    throw e;
  }
}

export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

export function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function err(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Parses a positive integer option or fails as bad usage. */
export function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new UsageError(`${name} must be a whole number, got ${JSON.stringify(value)}`);
  return n;
}

/** Adds the options every command takes: `--store <dir>` and `--json`. */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .option('--store <dir>', 'store directory (default: $RELOOP_STORE or ./.reloop)')
    .option('--json', 'machine-readable output');
}

/**
 * How the user can call this CLI again, for hints: `reloop` when installed as a command,
 * else `node <path to bin/reloop.js>` relative to the current directory (npm scripts and
 * a fresh clone have no `reloop` on the PATH).
 */
export function selfCommand(): string {
  const entry = process.argv[1] ?? '';
  const bin = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../bin/reloop.js');
  if (!/(bin\/reloop\.js|src\/cli\/main\.ts)$/.test(entry)) return 'reloop';
  const rel = path.relative(process.cwd(), bin);
  return `node ${rel.startsWith('.') ? rel : `./${rel}`}`;
}
