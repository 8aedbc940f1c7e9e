import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { makeDirs } from '../lib/makeDirs.ts';
import { printable, printableText, terminalJson } from '../lib/printable.ts';
import { PRIVATE_DIR } from '../lib/privateModes.ts';
import type { StoreWarning } from '../store/fileStore.ts';
import { redactUrl } from '../store/redactUrl.ts';
import { type StoreLocation, storeLocation } from '../store/storeLocation.ts';
import type { EventStore } from '../store/types.ts';

/**
 * Exit codes of every command (docs/cli.md): 0 success; 1 the command ran and something failed
 * (a run that did not complete, a divergence, a check below its minimum) or the data it was
 * pointed at is missing or broken (no store, no such session, a corrupt log); 2 bad usage:
 * the command line, or a file or directory a flag names (--script, --settings, --cwd), cannot
 * be used — found before anything runs or is written; 3 a run paused for an approval
 * (`awaiting_approval`: `reloop approve` / `deny`, then resume).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, paused: 3 } as const;

/** Bad usage (exit 2). `code` names what was wrong, printed in brackets after the message. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly code: string = 'USAGE',
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A failure with its own one-line message (exit 1 unless told): no stack trace. An empty
 * message means the command already printed what went wrong.
 */
export class CommandFailed extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'CommandFailed';
  }
}

export interface GlobalOptions {
  store?: string;
  json?: boolean;
}

/** `--store`, else RELOOP_STORE, else ./.reloop: a directory (resolved against the current one) or a postgres:// URL. */
export function storeLocationOf(opts: GlobalOptions): StoreLocation {
  return storeLocation(opts.store ?? process.env.RELOOP_STORE ?? '.reloop');
}

/** How to name the store to a person: its directory, or its URL with the password masked. */
export function storeLabel(opts: GlobalOptions): string {
  const location = storeLocationOf(opts);
  return location.kind === 'file' ? location.dir : redactUrl(location.url);
}

/** The store directory, for commands that read files of a file store. */
export function storeDir(opts: GlobalOptions): string {
  const location = storeLocationOf(opts);
  return location.kind === 'file' ? location.dir : path.resolve('.reloop');
}

/**
 * Opens the store the flags name. Commands that only read it (`sessions`, `log`, `replay`,
 * `viz`, `coverage`, `serve`, and `fork`, whose source must exist) never create one: a missing
 * store is an error naming the directory. `run` and `import` create it (`create: true`). The
 * store module is loaded here, not at start-up, so `reloop --help` never pays for it. A
 * `postgres://` store is opened (its schema created or migrated) by the store layer.
 */
export async function openStore(
  opts: GlobalOptions,
  {
    create = false,
    quiet = [],
    flag = '--store',
  }: {
    create?: boolean;
    /** The flag that named the store, for the messages (`copy` opens two: `--from` and `--to`). */
    flag?: string;
    /** Warnings not worth a line here (`serve` reads logs while they are written: torn tails are normal). */
    quiet?: readonly StoreWarning['code'][];
  } = {},
): Promise<EventStore> {
  const location = storeLocationOf(opts);
  if (location.kind === 'postgres') {
    const { openStore: openStoreAt } = await import('../store/openStore.ts');
    return openStoreAt(location);
  }
  const dir = location.dir;
  try {
    if (create) await makeDirs(path.join(dir, 'sessions'), { mode: PRIVATE_DIR });
    else await assertStore(dir, flag);
    const { openFileStore } = await import('../store/fileStore.ts');
    return await openFileStore(dir, {
      // A person reads this: the warning's own sentence (it names the file and line), not its JSON.
      onWarning: (w) => {
        if (!quiet.includes(w.code)) err(`warning: ${typeof w === 'string' ? w : w.message}`);
      },
    });
  } catch (e) {
    if (e instanceof CommandFailed) throw e;
    const code = (e as { code?: string }).code;
    if (
      code === 'ENOTDIR' ||
      code === 'EEXIST' ||
      code === 'EACCES' ||
      code === 'EROFS' ||
      code === 'ENOENT'
    ) {
      throw new CommandFailed(
        `${flag} ${dir}: not a usable store directory (${code})`,
        EXIT.failed,
        'STORE_UNUSABLE',
      );
    }
    throw e;
  }
}

/** A store is a directory holding `sessions/`: anything else is not one, and is left untouched. */
async function assertStore(dir: string, flag: string): Promise<void> {
  const sessions = await stat(path.join(dir, 'sessions')).catch(() => undefined);
  if (sessions?.isDirectory()) return;
  const what = (await stat(dir).catch(() => undefined))
    ? 'is not a reloop store (no sessions/ in it)'
    : 'does not exist';
  throw new CommandFailed(
    `no store at ${dir}: the directory ${what}; ${flag === '--store' ? 'pass --store <dir> or set RELOOP_STORE' : `pass ${flag} <dir>`} (a store is created by \`${selfCommand()} run\`)`,
    EXIT.failed,
    'NO_STORE',
  );
}

/** `1 turn`, `2 turns`. */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export function timeOf(at: number): string {
  return new Date(at).toISOString().replace('T', ' ').replace('Z', '');
}

/*
 * Everything a command prints goes through the functions below (test/cli/outputLayer.test.ts
 * holds src/cli to it): log and model text reaches the terminal escaped, never interpreted
 * (src/lib/printable.ts; docs/security.md, "What reaches your terminal"). A line is one line:
 * a newline inside a value is shown as `\n`, so no value can print a line of its own.
 */

/** `--json` output: exact JSON (it parses back to the original text), with nothing a terminal acts on. */
export function printJson(value: unknown): void {
  process.stdout.write(`${terminalJson(value)}\n`);
}

/** Each argument as one line on stdout, every control and format character escaped. */
export function out(...lines: string[]): void {
  aboveFooter(lines.length === 0 ? '\n' : `${lines.map(printable).join('\n')}\n`);
}

/**
 * Text as it streams (the assistant's words in `reloop run`): its newlines and tabs kept, every
 * other control and format character escaped. Chunks are escaped one by one; an escape
 * sequence split across chunks is still escaped, each of its characters is.
 */
export function writeText(text: string): void {
  aboveFooter(printableText(text));
}

/**
 * A document the user asked for on stdout (`viz` without `--out`: Mermaid, DOT, HTML), written
 * as it is: it is a file's content, not lines for a person, and escaping would corrupt it.
 */
export function writeDocument(text: string): void {
  process.stdout.write(text);
}

/**
 * Lines for stdout, written in blocks of ~64 kB rather than one write each: a pipe or a file
 * makes every write a system call, and `log` prints one line per record. Each line as `out`'s.
 */
export class LineWriter {
  private buf: string[] = [];
  private size = 0;

  line(text: string): void {
    const shown = printable(text);
    this.buf.push(shown);
    this.size += shown.length + 1;
    if (this.size >= 65_536) this.flush();
  }

  flush(): void {
    if (this.buf.length === 0) return;
    process.stdout.write(`${this.buf.join('\n')}\n`);
    this.buf = [];
    this.size = 0;
  }
}

/**
 * A message on stderr (errors, warnings). It may span lines (a list of what is missing); every
 * line after the first is indented, so nothing inside a message (a server's error text, a
 * file name) can start a line that looks like one of reloop's own.
 */
export function err(message: string): void {
  if (footer !== null) process.stdout.write(FOOTER_CLEAR);
  process.stderr.write(`${printableText(message).replace(/\n/g, '\n  ')}\n`);
  if (footer !== null) process.stdout.write(footerDrawing(footer));
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
 * How the user can call this CLI again, for hints, as they invoked it: `npx reloop` when it ran
 * from a project's `node_modules/.bin` (a local install or npx: not on the PATH), `node <path
 * to bin/reloop.js>` relative to the current directory when started that way (a clone, npm
 * scripts), else `reloop` (installed as a command).
 */
export function selfCommand(): string {
  const entry = process.argv[1] ?? '';
  if (/[\\/]node_modules[\\/]\.bin[\\/]reloop$/.test(entry) || process.env.npm_command === 'exec')
    return 'npx reloop';
  if (!/(bin[\\/]reloop\.js|src[\\/]cli[\\/]main\.ts)$/.test(entry)) return 'reloop';
  const bin = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../bin/reloop.js');
  const rel = path.relative(process.cwd(), bin);
  return `node ${rel.startsWith('.') ? rel : `./${rel}`}`;
}

const COMMANDS =
  'run|chat|sessions|log|replay|fork|viz|coverage|paths|store|submit|worker|approvals|approve|deny|copy|serve|import|export';
const HINT = new RegExp(`(^|[(\`]|: )reloop (?=(?:${COMMANDS})\\b)`, 'g');

/** A message's `reloop <command>` hints (in brackets or backquotes, or after a colon) as the user invoked it. */
export function hinted(message: string): string {
  const self = selfCommand();
  return self === 'reloop' ? message : message.replace(HINT, (_m, before: string) => `${before}${self} `);
}

/*
 * The interactive session's screen (src/cli/chat/): its own cursor and line controls, from a
 * fixed set, and the prompt line, whose text is escaped here like every other line.
 */
const SCREEN_CONTROLS = {
  /** Bracketed paste: a paste arrives between markers, so its newlines do not submit it. */
  pasteOn: '\x1b[?2004h',
  pasteOff: '\x1b[?2004l',
  /** Back to column 0 and clear the line (a prompt line being replaced). */
  clearLine: '\r\x1b[2K',
} as const;

export function screenControl(control: keyof typeof SCREEN_CONTROLS): void {
  process.stdout.write(SCREEN_CONTROLS[control]);
}

/**
 * The prompt line, redrawn in place: `prompt` then `shown` (what of the line fits), the cursor
 * put at `cursorColumn` (0-based, counted from the start of the line).
 */
export function promptLine(prompt: string, shown: string, cursorColumn: number): void {
  const move = cursorColumn > 0 ? `\x1b[${Math.floor(cursorColumn)}C` : '';
  process.stdout.write(`${SCREEN_CONTROLS.clearLine}${printable(prompt)}${printable(shown)}\r${move}`);
}

/**
 * A dim line under the output (chat's typeahead while a run streams), kept out of the output
 * itself: every write of `out`/`writeText`/`err` clears it first and draws it again after.
 * Drawn relative to the cursor (the end of the output, mid-line or not): down a row (IND,
 * scrolling if at the bottom) and back up (RI) so the row exists, then save the cursor, draw
 * the row below, restore. Null clears it.
 */
let footer: string | null = null;
const FOOTER_CLEAR = '\x1b[J';

function footerDrawing(text: string): string {
  return `\x1bD\x1bM\x1b7\x1bD\r\x1b[2K\x1b[2m${printable(text)}\x1b[22m\x1b8`;
}

export function setFooter(text: string | null): void {
  if (footer === null && text === null) return;
  footer = text;
  process.stdout.write(text === null ? FOOTER_CLEAR : `${FOOTER_CLEAR}${footerDrawing(text)}`);
}

function aboveFooter(data: string): void {
  if (footer === null) process.stdout.write(data);
  else process.stdout.write(`${FOOTER_CLEAR}${data}${footerDrawing(footer)}`);
}
