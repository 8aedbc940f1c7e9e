/**
 * Issue 18, items 9, 12 and 16: `reloop import` against what it met in real use — a re-import that
 * deleted a run resumed on a cut-short import, a folder import that exited 1 over one known but
 * unmapped line, ids that collided (`a b` / `a_b`, `x.y` / `x`'s agent `y`), dot-files skipped
 * silently, an import killed half-way leaving a prefix. Real CLI, real file store, synthetic
 * transcripts.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { Transcript, text, toolUse } from '../support/claudeCodeTranscript.ts';
import { CLI_BIN, jsonLines, onlyJson, runCli } from '../support/cli.ts';

const SLOW = 120_000;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-import-safety-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A transcript of `rounds` tool rounds (Read, its result) and a closing answer. */
function toolRounds(sessionId: string, rounds: number, resultChars = 40, salt = 1): Transcript {
  const t = new Transcript({ sessionId, salt });
  t.prompt(`read ${rounds} files`);
  for (let i = 0; i < rounds; i++) {
    t.assistant([toolUse(`toolu_${i}`, 'Read', { file_path: `f${i}.txt` })]);
    t.toolResult(`toolu_${i}`, `${i}:${'x'.repeat(resultChars)}`);
  }
  t.assistant([text('All read.')]);
  return t;
}

async function project(name: string, files: Record<string, Transcript | string>): Promise<string> {
  const dir = path.join(root, name);
  for (const [file, t] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), typeof t === 'string' ? t : t.jsonl());
  }
  return dir;
}

const cli = (cwd: string, ...args: string[]) => runCli(args, { cwd, timeoutMs: SLOW });
const logOf = async (cwd: string, id: string) =>
  jsonLines<LogRecord>((await cli(cwd, 'log', id, '--store', 'st', '--json')).stdout);

describe('unmapped lines are reported, not failures (item 12)', () => {
  it(
    'a stop_hook_summary right after a tool batch maps to the Stop hooks’ decision; an unknown line is counted: exit 0',
    async () => {
      const hooks = new Transcript({ sessionId: 'sess-hooks' });
      hooks.prompt('edit it');
      hooks.assistant([toolUse('toolu_e', 'Read', { file_path: 'a.txt' })]);
      hooks.toolResult('toolu_e', 'a');
      hooks.stopHookSummary({ command: 'npm test' }); // the turn ended here, as in real transcripts
      hooks.prompt('continue');
      hooks.assistant([text('Done.')]);
      const unknown = new Transcript({ sessionId: 'sess-unknown', salt: 2 });
      unknown.prompt('hi');
      unknown.system('quantum_flux');
      unknown.assistant([text('hello')]);
      const dir = await project('p12', { 'sess-hooks.jsonl': hooks, 'sess-unknown.jsonl': unknown });
      const r = await cli(dir, 'import', '.', '--store', 'st');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('not mapped: system:quantum_flux ×1');
      expect(r.stdout).toContain('2 transcripts: 2 imported, 0 kept; 1 line not mapped');
      const log = await logOf(dir, 'cc-sess-hooks');
      expect(log.some((x) => x.type === 'import.unmapped')).toBe(false);
      expect(log.find((x) => x.type === 'hook.decided')?.data).toMatchObject({
        hook: 'Stop',
        decision: 'allow',
        command: 'npm test',
      });
      const verify = await cli(dir, 'replay', 'cc-sess-hooks', '--verify', '--store', 'st');
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    },
    SLOW,
  );

  it(
    'a malformed line still exits 1, naming it',
    async () => {
      const t = new Transcript({ sessionId: 'sess-bad' });
      t.prompt('hi');
      t.raw('{not json');
      t.assistant([text('hello')]);
      const dir = await project('p12bad', { 'sess-bad.jsonl': t });
      const r = await cli(dir, 'import', '.', '--store', 'st');
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`warning: ${path.join(dir, 'sess-bad.jsonl')} line 2: not valid JSON`);
    },
    SLOW,
  );
});

describe('ids are unique per source file (item 16)', () => {
  it(
    '`a b.jsonl` and `a_b.jsonl` become two sessions, each kept on the next import',
    async () => {
      const dir = await project('p16a', {
        'a b.jsonl': toolRounds('a b', 1, 10, 1),
        'a_b.jsonl': toolRounds('a_b', 2, 10, 2),
      });
      const first = onlyJson<{ sessions: { sessionId: string; source: string; records: number }[] }>(
        await cli(dir, 'import', '.', '--store', 'st', '--json'),
      );
      expect(first.sessions.map((s) => path.basename(s.source))).toEqual(['a b.jsonl', 'a_b.jsonl']);
      const ids = first.sessions.map((s) => s.sessionId);
      expect(new Set(ids).size).toBe(2);
      expect(ids[1]).toBe('cc-a_b'); // Claude Code-like names keep their id
      for (const s of first.sessions) {
        const created = (await logOf(dir, s.sessionId))[0]!;
        expect(created.type === 'session.created' && created.data.importedFrom?.file).toBe(s.source);
      }
      const again = await cli(dir, 'import', '.', '--store', 'st');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('2 transcripts: 0 imported, 2 kept');
      // The store inside the folder is not read as transcripts either.
      expect(again.stdout).toContain(`skipped   ${path.join(dir, 'st')} (the store imported into`);
    },
    SLOW,
  );

  it(
    '`x.y.jsonl` beside `x/subagents/agent-y.jsonl`: two sessions, and --force of one leaves the other’s child alone',
    async () => {
      const dir = await project('p16b', {
        'x.jsonl': toolRounds('x', 1, 10, 1),
        'x/subagents/agent-y.jsonl': toolRounds('x', 1, 10, 3),
        'x.y.jsonl': toolRounds('x.y', 3, 10, 4),
      });
      const r = await cli(dir, 'import', '.', '--store', 'st', '--json');
      expect(r.code, r.stderr).toBe(0);
      const rows = () =>
        cli(dir, 'sessions', '--store', 'st', '--json').then((x) =>
          onlyJson<{ id: string; lastSeq: number; parent: { session: string } | null }[]>(x),
        );
      const before = await rows();
      expect(before).toHaveLength(3);
      const child = before.find((s) => s.parent?.session === 'cc-x')!;
      expect(child.id).toBe('cc-x.y');
      const childLog = await logOf(dir, child.id);
      const forced = await cli(dir, 'import', path.join(dir, 'x.y.jsonl'), '--force', '--store', 'st');
      expect(forced.code, forced.stderr).toBe(0);
      expect(await logOf(dir, child.id)).toEqual(childLog);
      expect((await rows()).map((s) => s.id).sort()).toEqual(before.map((s) => s.id).sort());
    },
    SLOW,
  );

  it(
    'a dot-file in a folder is reported as skipped, and imported when named',
    async () => {
      const dir = await project('p16c', {
        '.draft.jsonl': toolRounds('draft', 1),
        'main.jsonl': toolRounds('main', 1),
      });
      const r = await cli(dir, 'import', '.', '--store', 'st');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(
        `skipped   ${path.join(dir, '.draft.jsonl')} (a hidden file: name it on its own to import it)`,
      );
      expect(r.stdout).toContain('1 transcript: 1 imported');
      const named = await cli(dir, 'import', '.draft.jsonl', '--store', 'st');
      expect(named.code, named.stderr).toBe(0);
      expect(named.stdout).toContain('1 transcript: 1 imported');
    },
    SLOW,
  );
});

describe('an import never leaves a prefix, and never loses what was added to it (item 9)', () => {
  it(
    'killed with -9 while it writes: the session is absent or whole, and the next import completes it',
    async () => {
      const dir = await project('p9kill', { 'big.jsonl': toolRounds('big', 2_000, 2_000) });
      const sessions = path.join(dir, 'st', 'sessions');
      await mkdir(sessions, { recursive: true });
      const child = spawn(process.execPath, [CLI_BIN, 'import', 'big.jsonl', '--store', 'st'], {
        cwd: dir,
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => child.on('exit', resolve));
      // Killed as soon as the stream is being written (its temporary file is there).
      let sawTemp = false;
      for (let i = 0; i < 30_000 && child.exitCode === null; i++) {
        if ((await readdir(sessions)).some((f) => f.endsWith('.tmp') && f.startsWith('.cc-big'))) {
          sawTemp = true;
          child.kill('SIGKILL');
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      await exited;
      expect(sawTemp).toBe(true);
      const listed = onlyJson<{ id: string; status: string }[]>(
        await cli(dir, 'sessions', '--store', 'st', '--json'),
      );
      if (listed.length > 0) {
        // Killed after the stream was linked into place: then it is whole.
        const log = await logOf(dir, 'cc-big');
        const created = log[0]!;
        expect(created.type === 'session.created' && created.data.importedFrom?.records).toBe(log.length);
      }
      expect(listed.every((s) => s.status !== 'interrupted')).toBe(true);
      const again = await cli(dir, 'import', 'big.jsonl', '--store', 'st');
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain('1 transcript: 1 imported');
    },
    SLOW,
  );

  it(
    'a cut-short import a run was resumed on: a plain import refuses (naming --force) and keeps the run; --force replaces',
    async () => {
      const dir = await project('p9resume', { 'cut.jsonl': toolRounds('cut', 6) });
      expect((await cli(dir, 'import', 'cut.jsonl', '--store', 'st')).code).toBe(0);
      // What an import killed half-way by an older reloop left: the first records only.
      const file = path.join(dir, 'st', 'sessions', 'cc-cut.jsonl');
      const lines = (await readFile(file, 'utf8')).split('\n');
      await truncate(file, Buffer.byteLength(`${lines.slice(0, 12).join('\n')}\n`));
      await writeFile(
        path.join(dir, 'script.json'),
        JSON.stringify({ turns: [{ text: 'Picked up where it stopped.' }] }),
      );
      const resumed = await cli(
        dir,
        'run',
        '--resume',
        'cc-cut',
        '--script',
        'script.json',
        '--cwd',
        dir,
        '--store',
        'st',
        'go on',
      );
      expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
      const withRun = await logOf(dir, 'cc-cut');
      expect(withRun.length).toBeGreaterThan(12);

      const plain = await cli(dir, 'import', 'cut.jsonl', '--store', 'st');
      expect(plain.code).toBe(1);
      expect(plain.stderr).toMatch(
        /error: .*cut\.jsonl: session cc-cut: \d+ records in the store are not part of this import .*--force replaces them anyway/,
      );
      expect(await logOf(dir, 'cc-cut')).toEqual(withRun);

      const forced = await cli(dir, 'import', 'cut.jsonl', '--force', '--store', 'st');
      expect(forced.code, forced.stderr).toBe(0);
      const replaced = await logOf(dir, 'cc-cut');
      const created = replaced[0]!;
      expect(created.type === 'session.created' && created.data.importedFrom?.records).toBe(replaced.length);
    },
    SLOW,
  );
});
