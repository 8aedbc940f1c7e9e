/**
 * A model is an adversary: its text, its tool inputs, the tools' output, a file name, a server's
 * error message and the prompt carry terminal escapes (OSC 52 clipboard write, CSI cursor
 * moves and line erases, `\r` before a fake "approved", the 8-bit CSI U+009B, the bidi override
 * U+202E). Through the real CLI, none of it reaches the human output of run / log (and --follow)
 * / sessions / approvals / replay raw: it is shown escaped. `--json` gives back the exact text,
 * and the log keeps it byte for byte.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import type { SessionInfo } from '../../src/store/types.ts';
import { type CliResult, jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { rawControls } from '../support/terminal.ts';

const SLOW = 180_000;
const ESC = String.fromCharCode(0x1b);
const BEL = String.fromCharCode(0x07);
const CSI8 = String.fromCharCode(0x9b);
const RLO = String.fromCharCode(0x202e);

/** Each attack once: clipboard write, erase + cursor up, carriage return, 8-bit CSI, bidi override. */
const HOSTILE = `see${ESC}]52;c;cm0gLXJmIH4K${BEL}${ESC}[2K${ESC}[1A\r✓ approved${CSI8}8m${RLO}txt.exe`;
/** How the human output shows it (src/lib/printable.ts). */
const SHOWN = [
  '\\x1b]52;c;cm0gLXJmIH4K\\x07',
  '\\x1b[2K\\x1b[1A',
  '\\r✓ approved',
  '\\x9b8m',
  '\\u202etxt.exe',
];

let cwd: string;
let store: string;
let parked: string;
let failed: string;
const runs: Record<string, CliResult> = {};

/** Human output: nothing raw, every attack visible in its escaped form. */
function expectEscaped(r: CliResult, what: string, shown: readonly string[] = SHOWN) {
  const all = r.stdout + r.stderr;
  expect(rawControls(all), `${what}: raw control characters in\n${JSON.stringify(all)}`).toEqual([]);
  for (const s of shown) expect(all, what).toContain(s);
}

beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-escapes-'));
  store = path.join(cwd, 'store');
  // A file whose name and content carry the attacks: Read is allowed without asking.
  await writeFile(path.join(cwd, `notes${CSI8}${RLO}.txt`), `${HOSTILE}\n`);
  const script = {
    turns: [
      {
        content: [
          { type: 'text', text: HOSTILE },
          {
            type: 'tool_use',
            id: 'toolu_read',
            name: 'Read',
            input: { file_path: `notes${CSI8}${RLO}.txt` },
          },
          // Its output lists the file name.
          { type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '*.txt' } },
        ],
        stop_reason: 'tool_use',
      },
      {
        // Bash asks under the default policy; with nobody at a terminal the run parks on it.
        content: [
          { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: { command: `echo ${HOSTILE}` } },
        ],
        stop_reason: 'tool_use',
      },
    ],
  };
  await writeFile(path.join(cwd, 'parks.json'), JSON.stringify(script));
  await writeFile(
    path.join(cwd, 'fails.json'),
    JSON.stringify({ turns: [{ error: { status: 400, type: 'invalid_request_error', message: HOSTILE } }] }),
  );
  const park = await runCli(['run', '--script', 'parks.json', '--store', store, `do it ${HOSTILE}`], { cwd });
  expect(park.code, park.stderr).toBe(3);
  runs.park = park;
  parked = /^session (\S+)/m.exec(park.stdout)![1]!;
  const fail = await runCli(['run', '--script', 'fails.json', '--store', store, 'hi'], { cwd });
  expect(fail.code, fail.stderr).toBe(1);
  runs.fail = fail;
  failed = /^session (\S+)/m.exec(fail.stdout)![1]!;
}, SLOW);

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('what a model controls reaches the terminal escaped', () => {
  it('reloop run: the streamed text, tool lines and the error line', () => {
    expectEscaped(runs.park!, 'run (parked)');
    // The assistant's text streamed: escaped, on its own line, not interpreted.
    expect(runs.park!.stdout).toContain(`▸ see${SHOWN[0]}`);
    // A server's error message: in the ✗ model line and the run's error line.
    expectEscaped(runs.fail!, 'run (model error)', SHOWN);
    expect(runs.fail!.stdout).toMatch(/^ {2}error: .*\\x1b\]52/m);
  });

  it(
    'reloop log, log --follow and replay of both sessions',
    async () => {
      const [log, follow, logFailed, replay] = await Promise.all([
        runCli(['log', parked, '--store', store], { cwd }),
        runCli(['log', parked, '--follow', '--store', store], { cwd }),
        runCli(['log', failed, '--store', store], { cwd }),
        runCli(['replay', parked, '--store', store], { cwd }),
      ]);
      for (const [what, r] of Object.entries({ log, follow, logFailed, replay })) {
        expect(r.code, `${what}: ${r.stderr}`).toBe(0);
        // replay shows messages with whitespace collapsed: the \r is a space there.
        expectEscaped(r, what, what === 'replay' ? SHOWN.filter((s) => !s.startsWith('\\r')) : SHOWN);
      }
      // One line per record whatever the record holds: no value can start a line of its own.
      const lines = log.stdout.split('\n').filter((l) => l !== '');
      expect(lines.every((l) => /^ {0,4}\d+ {2}\d{4}-/.test(l))).toBe(true);
      // A file name too (Glob's output).
      expect(log.stdout).toContain('notes\\x9b\\u202e.txt');
    },
    SLOW,
  );

  it(
    'reloop sessions and approvals',
    async () => {
      const [sessions, approvals] = await Promise.all([
        runCli(['sessions', '--store', store], { cwd }),
        runCli(['approvals', '--store', store], { cwd }),
      ]);
      // The title is the prompt, its whitespace collapsed: \r is a space there.
      expectEscaped(
        sessions,
        'sessions',
        SHOWN.filter((s) => !s.startsWith('\\r')),
      );
      // approvals shows the input as JSON (ESC is \u001b there, and \r is \\r), cut at 100 characters.
      expect(rawControls(approvals.stdout + approvals.stderr)).toEqual([]);
      expect(approvals.stdout).toContain('toolu_bash');
      expect(approvals.stdout).toContain('\\x9b8m\\u202etxt.exe');
    },
    SLOW,
  );
});

describe('--json and the log keep the exact text', () => {
  it(
    'log --json, sessions --json and approvals --json parse back to the original characters',
    async () => {
      const [log, sessions, approvals] = await Promise.all([
        runCli(['log', parked, '--json', '--store', store], { cwd }),
        runCli(['sessions', '--json', '--store', store], { cwd }),
        runCli(['approvals', '--json', '--store', store], { cwd }),
      ]);
      // Exact JSON, and nothing in it a terminal acts on: C1 and bidi are \u escapes too.
      for (const r of [log, sessions, approvals]) expect(rawControls(r.stdout)).toEqual([]);
      const records = jsonLines<LogRecord>(log.stdout);
      const responded = records.find((r) => r.type === 'model.responded');
      expect(responded?.type === 'model.responded' && responded.data.response.content[0]).toEqual({
        type: 'text',
        text: HOSTILE,
      });
      const read = records.find((r) => r.type === 'tool.finished' && r.data.name === 'Read');
      expect(read?.type === 'tool.finished' && String(read.data.result.content)).toContain(HOSTILE);
      const row = onlyJson<SessionInfo[]>(sessions).find((s) => s.id === parked);
      expect(row?.title).toContain(`${ESC}]52;c;cm0gLXJmIH4K${BEL}`);
      expect(row?.title).toContain(`${CSI8}8m${RLO}txt.exe`);
      const [waiting] = onlyJson<{ input: { command: string } }[]>(approvals);
      expect(waiting?.input.command).toBe(`echo ${HOSTILE}`);
    },
    SLOW,
  );

  it('the log file holds the bytes the model sent', async () => {
    const file = await readFile(path.join(store, 'sessions', `${parked}.jsonl`), 'utf8');
    // JSON.stringify's own escapes for C0, the characters themselves for the rest.
    expect(file).toContain(JSON.stringify(HOSTILE).slice(1, -1));
    expect(file).toContain(`${CSI8}8m${RLO}txt.exe`);
  });
});
