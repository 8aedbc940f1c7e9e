/**
 * The CLI as a user runs it: `node bin/reloop.js …` in a child process, in a temp working
 * directory, with a temp store. Checks the exact JSON shapes, exit codes (0 ok, 1 failed,
 * 2 bad usage), and that failing commands write nothing.
 */
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CURRENT_SCHEMA_VERSION, type LogRecord } from '../../src/store/records.ts';
import { sealRecords } from '../../src/store/seal.ts';
import { type CliResult, jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { exists } from '../support/files.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

// Each spawn starts node and loads the compiled runtime: seconds on a busy machine. Be generous.
const SLOW = 180_000;

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-cli-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

let dirs = 0;
/** A fresh directory under the suite's temp root. */
async function freshDir(name: string): Promise<string> {
  const dir = path.join(root, `${++dirs}-${name}`);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function writeJson(file: string, value: unknown): Promise<string> {
  await writeFile(file, `${JSON.stringify(value, null, 2)}\n`);
  return file;
}

/** Every file under `dir` with its bytes: equal snapshots mean nothing was written, created or removed. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  async function walk(d: string) {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      const p = path.join(d, entry.name);
      if (entry.isDirectory()) {
        out[`${path.relative(dir, p)}/`] = '(dir)';
        await walk(p);
      } else out[path.relative(dir, p)] = (await readFile(p)).toString('base64');
    }
  }
  await walk(dir);
  return out;
}

const RUN_KEYS = ['reason', 'runId', 'sessionId', 'status', 'turns', 'usage'];
const USAGE_KEYS = [
  'cacheCreationInputTokens',
  'cacheReadInputTokens',
  'costUsd',
  'inputTokens',
  'outputTokens',
];

interface RunJson {
  sessionId: string;
  runId: string;
  status: string;
  reason: string;
  turns: number;
  usage: Record<string, number>;
}

function expectRunJson(r: CliResult): RunJson {
  const j = onlyJson<RunJson>(r);
  expect(Object.keys(j).sort()).toEqual(RUN_KEYS);
  expect(Object.keys(j.usage).sort()).toEqual(USAGE_KEYS);
  expect(j.sessionId).toMatch(/^s_[A-Za-z0-9_-]+$/);
  expect(j.runId).toMatch(/^r_[A-Za-z0-9_-]+$/);
  expect(['completed', 'failed', 'aborted']).toContain(j.status);
  return j;
}

/** A script: one Glob round on the working directory, then a final answer. */
const globScript = {
  turns: [
    {
      text: 'Looking for notes.',
      content: [{ type: 'tool_use', id: 'tu_glob_1', name: 'Glob', input: { pattern: '*.txt' } }],
      stop_reason: 'tool_use',
      usage: { input_tokens: 1000, output_tokens: 50 },
    },
    { text: 'There is one note: notes.txt.', usage: { input_tokens: 1100, output_tokens: 20 } },
  ],
};

/** A project directory with a file, a store, the two scripts; one completed run in the store. */
async function projectWithRun() {
  const cwd = await freshDir('project');
  const store = path.join(cwd, 'store');
  await writeFile(path.join(cwd, 'notes.txt'), 'remember the milk\n');
  const script = await writeJson(path.join(cwd, 's.json'), globScript);
  const r = await runCli(['run', '--script', script, '--store', store, '--json', 'What notes are there?'], {
    cwd,
  });
  expect(r.code, r.stderr).toBe(0);
  const run = expectRunJson(r);
  const file = path.join(store, 'sessions', `${run.sessionId}.jsonl`);
  return { cwd, store, script, run, file };
}

type Fixture = Awaited<ReturnType<typeof projectWithRun>>;
let shared: Promise<Fixture> | undefined;
/** One project with one completed run, for the tests that only read it (they check they write nothing). */
function sharedProject(): Promise<Fixture> {
  shared ??= projectWithRun();
  return shared;
}

async function logOf(cwd: string, store: string, id: string): Promise<LogRecord[]> {
  const r = await runCli(['log', id, '--json', '--store', store], { cwd });
  expect(r.code, r.stderr).toBe(0);
  return jsonLines<LogRecord>(r.stdout);
}

describe('reloop run', () => {
  it(
    'run --script --json prints exactly one result object and exits 0 when completed',
    async () => {
      const { cwd, store, run, file } = await sharedProject();
      expect(run).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });
      expect(run.usage).toMatchObject({ inputTokens: 2100, outputTokens: 70 });
      expect(run.usage.costUsd).toBeGreaterThan(0);
      // The Glob really ran in the working directory: its result is in the log.
      const records = await logOf(cwd, store, run.sessionId);
      const finished = records.find((r) => r.type === 'tool.finished');
      expect(finished?.data).toMatchObject({ name: 'Glob', outcome: 'ok' });
      expect(JSON.stringify(finished?.data)).toContain('notes.txt');
      expect(await exists(file)).toBe(true);
      // --store given: nothing in the default place.
      expect(await exists(path.join(cwd, '.reloop'))).toBe(false);
    },
    SLOW,
  );

  it(
    'a script that ends in refusal: status failed, reason refused, exit 1',
    async () => {
      const cwd = await freshDir('refusal');
      const script = await writeJson(path.join(cwd, 'refuse.json'), {
        turns: [{ text: "I can't help with that.", stop_reason: 'refusal' }],
      });
      const r = await runCli(['run', '--script', script, '--store', 'st', '--json', 'do it'], { cwd });
      expect(r.code).toBe(1);
      expect(expectRunJson(r)).toMatchObject({ status: 'failed', reason: 'refused', turns: 1 });
    },
    SLOW,
  );

  it(
    'RELOOP_STORE is the store when --store is not given',
    async () => {
      const cwd = await freshDir('env-store');
      const store = path.join(cwd, 'from-env');
      const script = await writeJson(path.join(cwd, 's.json'), { turns: [{ text: 'hello' }] });
      const r = await runCli(['run', '--script', script, '--json', 'hi'], {
        cwd,
        env: { RELOOP_STORE: store },
      });
      expect(r.code, r.stderr).toBe(0);
      const run = expectRunJson(r);
      expect(await exists(path.join(store, 'sessions', `${run.sessionId}.jsonl`))).toBe(true);
      expect(await exists(path.join(cwd, '.reloop'))).toBe(false);
      // And it is read back through the variable too.
      const s = await runCli(['sessions', '--json'], { cwd, env: { RELOOP_STORE: store } });
      expect(s.code).toBe(0);
      expect(onlyJson<{ id: string }[]>(s).map((x) => x.id)).toEqual([run.sessionId]);
    },
    SLOW,
  );

  describe('against a Messages API server (ANTHROPIC_BASE_URL)', () => {
    let server: MessagesServer;
    beforeAll(async () => {
      server = await startMessagesServer({ apiKey: 'sk-test' });
    });
    afterAll(async () => {
      await server.close();
    });

    it(
      'run --model works like the real service: a Glob round, the tool_result sent back',
      async () => {
        const cwd = await freshDir('anthropic');
        await writeFile(path.join(cwd, 'todo.txt'), 'ship it\n');
        server.enqueue(
          toolUseReply('Glob', { pattern: '*.txt' }, { toolUseId: 'toolu_glob_1', chunkSize: 4 }),
          textReply('There is todo.txt.'),
        );
        const r = await runCli(
          ['run', '--model', 'claude-sonnet-4-6', '--store', 'st', '--json', 'List the text files.'],
          { cwd, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' } },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).not.toContain('no price known');
        expect(expectRunJson(r)).toMatchObject({ status: 'completed', reason: 'completed', turns: 2 });
        expect(server.pending()).toBe(0);
        expect(server.requests).toHaveLength(2);
        expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test');
        expect(server.requests[0]?.body).toMatchObject({ model: 'claude-sonnet-4-6', stream: true });
        expect(server.requests[1]?.body.messages?.[2]).toEqual({
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_glob_1', content: 'todo.txt' }],
        });
        // The key is in no file of the store.
        const files = await snapshot(path.join(cwd, 'st'));
        for (const [name, b64] of Object.entries(files)) {
          expect(Buffer.from(b64, 'base64').toString('utf8'), name).not.toContain('sk-test');
        }
      },
      SLOW,
    );

    it(
      'a model the price table does not know: a warning that it counts as $0 and the budget cannot stop it',
      async () => {
        const cwd = await freshDir('unpriced');
        server.enqueue(textReply('Hello.'));
        const r = await runCli(
          ['run', '--model', 'my-finetune-1', '--max-budget-usd', '1', '--store', 'st', '--json', 'Hi.'],
          { cwd, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' } },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toContain(
          'warning: no price known for model "my-finetune-1": its usage counts as $0, so --max-budget-usd cannot stop this run',
        );
        expect(expectRunJson(r)).toMatchObject({ status: 'completed', usage: { costUsd: 0 } });
      },
      SLOW,
    );
  });
});

describe('sessions, log, replay, fork', () => {
  let p: Fixture;
  let records: LogRecord[];
  beforeAll(async () => {
    p = await sharedProject();
    records = await logOf(p.cwd, p.store, p.run.sessionId);
  }, SLOW);

  it(
    'log --json: one valid record per line, seq 1..N, this session only',
    async () => {
      expect(records.length).toBeGreaterThan(10);
      expect(records.map((r) => r.seq)).toEqual(records.map((_, i) => i + 1));
      for (const r of records) {
        expect(r).toMatchObject({ v: CURRENT_SCHEMA_VERSION, session: p.run.sessionId });
        expect(Object.keys(r).sort()).toEqual(['at', 'data', 'h', 'run', 'seq', 'session', 'type', 'v']);
      }
      expect(records[0]?.type).toBe('session.created');
      expect(records.at(-1)).toMatchObject({
        type: 'run.ended',
        data: { status: 'completed', reason: 'completed', turns: 2 },
      });
      // --type filters
      const t = await runCli(['log', p.run.sessionId, '--json', '--type', 'transition', '--store', p.store], {
        cwd: p.cwd,
      });
      expect(t.code).toBe(0);
      expect(jsonLines<LogRecord>(t.stdout).map((r) => (r.data as { reason: string }).reason)).toEqual([
        'query_built',
        'tool_use_requested',
        'tool_result_continuation',
        'query_built',
        'finish_requested',
        'completed',
      ]);
    },
    SLOW,
  );

  it(
    'sessions --json: an array of rows with id, title, status, lastSeq, forkedFrom',
    async () => {
      const r = await runCli(['sessions', '--json', '--store', p.store], { cwd: p.cwd });
      expect(r.code).toBe(0);
      const rows = onlyJson<Record<string, unknown>[]>(r);
      expect(rows).toHaveLength(1);
      expect(Object.keys(rows[0]!).sort()).toEqual([
        'created',
        'forkedFrom',
        'id',
        'lastSeq',
        'parent',
        'status',
        'title',
        'updated',
      ]);
      expect(rows[0]).toMatchObject({
        id: p.run.sessionId,
        title: 'What notes are there?',
        status: 'completed',
        lastSeq: records.length,
        forkedFrom: null,
        parent: null,
      });
    },
    SLOW,
  );

  it(
    'replay --verify --json: ok, with the record and transition counts',
    async () => {
      const r = await runCli(['replay', p.run.sessionId, '--verify', '--json', '--store', p.store], {
        cwd: p.cwd,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(
        `${JSON.stringify({
          ok: true,
          records: records.length,
          transitions: records.filter((x) => x.type === 'transition').length,
          sealed: true,
          divergence: null,
        })}\n`,
      );
    },
    SLOW,
  );

  it(
    'replay --verify on a log whose model response was rewritten: ok false, the divergence, exit 1',
    async () => {
      const store = path.join(await freshDir('tampered'), 'store');
      await cp(p.store, store, { recursive: true });
      const file = path.join(store, 'sessions', `${p.run.sessionId}.jsonl`);
      const lines = (await readFile(file, 'utf8')).split('\n');
      const i = lines.findIndex((l) => l.includes('"type":"model.responded"'));
      const rec = JSON.parse(lines[i]!) as LogRecord & { data: { response: Record<string, unknown> } };
      // The model now answers without a tool call: replay must take finish_requested instead.
      rec.data.response.content = [{ type: 'text', text: 'No notes, I guess.' }];
      rec.data.response.stopReason = 'end_turn';
      lines[i] = JSON.stringify(rec);
      // Sealed anew, as a deliberate rewrite would be: unsealed, the seal alone names the edited
      // record; sealed, the re-drive must find where the machine goes another way.
      const resealed = sealRecords(
        undefined,
        lines.filter(Boolean).map((l) => JSON.parse(l) as LogRecord),
      );
      await writeFile(file, `${resealed.lines.join('\n')}\n`);
      const before = await snapshot(store);

      // Still a valid log: it reads fine. The JSON and the human verify both exit 1.
      const [log, r, human] = await Promise.all([
        runCli(['log', p.run.sessionId, '--json', '--store', store], { cwd: p.cwd }),
        runCli(['replay', p.run.sessionId, '--verify', '--json', '--store', store], { cwd: p.cwd }),
        runCli(['replay', p.run.sessionId, '--verify', '--store', store], { cwd: p.cwd }),
      ]);
      expect(log.code).toBe(0);
      expect(jsonLines(log.stdout)).toHaveLength(records.length);

      expect(r.code).toBe(1);
      const report = onlyJson<{
        ok: boolean;
        records: number;
        divergence: { seq: number; expected: unknown; actual: unknown; detail: string };
      }>(r);
      expect(report.ok).toBe(false);
      expect(report.records).toBe(records.length);
      const edge = records.find(
        (x) => x.type === 'transition' && (x.data as { reason: string }).reason === 'tool_use_requested',
      )!;
      expect(edge.seq).toBeGreaterThan(rec.seq);
      expect(report.divergence.seq).toBe(edge.seq);
      expect(report.divergence.expected).toMatchObject({
        from: 'requesting',
        to: 'dispatchingTools',
        reason: 'tool_use_requested',
      });
      expect(report.divergence.actual).toMatchObject({
        from: 'requesting',
        to: 'awaitingStopHook',
        reason: 'finish_requested',
      });
      expect(human.code).toBe(1);
      expect(human.stdout).toContain(`DIVERGED at seq ${edge.seq}`);
      expect(await snapshot(store)).toEqual(before);
    },
    SLOW,
  );

  it(
    'fork --at: a new session with the prefix, the original byte-identical; --resume continues the fork',
    async () => {
      const store = path.join(await freshDir('fork'), 'store');
      await cp(p.store, store, { recursive: true });
      const id = p.run.sessionId;
      const originalFile = path.join(store, 'sessions', `${id}.jsonl`);
      const original = await readFile(originalFile);
      const at = records.length; // the end of the run: a clean point to continue from

      const f = await runCli(['fork', id, '--at', String(at), '--json', '--store', store], { cwd: p.cwd });
      expect(f.code, f.stderr).toBe(0);
      const fork = onlyJson<{ sessionId: string }>(f);
      expect(Object.keys(fork)).toEqual(['sessionId']);
      expect(fork.sessionId).not.toBe(id);
      expect(await readFile(originalFile)).toEqual(original);

      const forked = await logOf(p.cwd, store, fork.sessionId);
      expect(forked.map((r) => r.seq)).toEqual(records.slice(0, at).map((r) => r.seq));
      const expected = records.slice(0, at).map((r) => {
        const moved = { ...r, session: fork.sessionId } as LogRecord;
        if (moved.type === 'session.created')
          moved.data = { ...moved.data, forkedFrom: { session: id, seq: at } };
        return moved;
      });
      // The copy is sealed anew (its records name the new session): equal but for the seals.
      const unsealed = (rs: LogRecord[]) => rs.map(({ h: _h, ...r }) => r);
      expect(unsealed(forked)).toEqual(unsealed(expected));
      expect(forked.every((r) => typeof r.h === 'string')).toBe(true);

      const s = await runCli(['sessions', '--json', '--store', store], { cwd: p.cwd });
      const rows = onlyJson<{ id: string; forkedFrom: unknown; lastSeq: number }[]>(s);
      expect(rows.find((x) => x.id === fork.sessionId)).toMatchObject({
        forkedFrom: { session: id, seq: at },
        lastSeq: at,
      });
      expect(rows.find((x) => x.id === id)).toMatchObject({ forkedFrom: null, lastSeq: records.length });

      // Continue the fork with another script.
      const s2 = await writeJson(path.join(p.cwd, 's2.json'), {
        turns: [{ text: 'Going on: the note says to remember the milk.' }],
      });
      const r = await runCli(
        ['run', '--resume', fork.sessionId, '--script', s2, '--store', store, '--json', 'go on'],
        { cwd: p.cwd },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(expectRunJson(r)).toMatchObject({ sessionId: fork.sessionId, status: 'completed', turns: 1 });
      const continued = await logOf(p.cwd, store, fork.sessionId);
      expect(continued.slice(0, at)).toEqual(forked);
      expect(continued.slice(at).map((x) => x.type)).toContain('run.started');
      expect(continued.find((x) => x.seq > at && x.type === 'user.message')?.data).toEqual({
        message: { role: 'user', content: 'go on' },
      });
      // The continued run saw the whole forked history: prompt, tool round, answer, new prompt.
      const requested = continued.filter((x) => x.seq > at && x.type === 'model.requested');
      expect(requested.map((x) => (x.data as { messageCount: number }).messageCount)).toEqual([5]);
      expect(await readFile(originalFile)).toEqual(original);

      const v = await runCli(['replay', fork.sessionId, '--verify', '--json', '--store', store], {
        cwd: p.cwd,
      });
      expect(v.code, v.stdout + v.stderr).toBe(0);
      expect(onlyJson<{ ok: boolean }>(v).ok).toBe(true);
    },
    SLOW,
  );

  it(
    'fork in the middle of a run, then --resume: the interrupted run is closed, the new one completes',
    async () => {
      const store = path.join(await freshDir('fork-mid'), 'store');
      await cp(p.store, store, { recursive: true });
      const id = p.run.sessionId;
      // Right after the Glob was durably started: as if the process died while it ran.
      const at = records.find((r) => r.type === 'tool.started')!.seq;
      const f = await runCli(['fork', id, '--at', String(at), '--json', '--store', store], { cwd: p.cwd });
      expect(f.code, f.stderr).toBe(0);
      const fork = onlyJson<{ sessionId: string }>(f).sessionId;
      // Nothing runs the fork's copied run: it is listed as interrupted, not running.
      const listed = await runCli(['sessions', '--json', '--store', store], { cwd: p.cwd });
      const row = onlyJson<{ id: string; status: string }[]>(listed).find((x) => x.id === fork);
      expect(row?.status).toBe('interrupted');
      const s2 = await writeJson(path.join(p.cwd, 's2-mid.json'), { turns: [{ text: 'Found notes.txt.' }] });
      const r = await runCli(['run', '--resume', fork, '--script', s2, '--store', store, '--json', 'go on'], {
        cwd: p.cwd,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(expectRunJson(r)).toMatchObject({ sessionId: fork, status: 'completed' });
      const log = await logOf(p.cwd, store, fork);
      const ends = log.filter((x) => x.type === 'run.ended').map((x) => x.data);
      expect(ends).toEqual([
        expect.objectContaining({ status: 'aborted', reason: 'interrupted' }),
        expect.objectContaining({ status: 'completed', reason: 'completed' }),
      ]);
      // Glob is read-only: re-run on resume, its real result goes into the history.
      const rerun = log.find((x) => x.seq > at && x.type === 'tool.finished');
      expect(rerun?.data).toMatchObject({ name: 'Glob', outcome: 'ok' });
      expect(JSON.stringify(rerun?.data)).toContain('notes.txt');
      const after = await runCli(['sessions', '--json', '--store', store], { cwd: p.cwd });
      expect(onlyJson<{ id: string; status: string }[]>(after).find((x) => x.id === fork)?.status).toBe(
        'completed',
      );
    },
    SLOW,
  );
});

describe('bad input: a clear message, the right exit code, nothing written', () => {
  let p: Fixture;
  beforeAll(async () => {
    p = await sharedProject();
  }, SLOW);

  /**
   * Runs several commands on a store (at once: each spawn is slow) and checks that no file
   * of the store changed, appeared or vanished.
   */
  async function unchanged(store: string, argsList: string[][]): Promise<CliResult[]> {
    const before = await snapshot(store);
    const results = await Promise.all(
      argsList.map((args) => runCli([...args, '--store', store], { cwd: p.cwd })),
    );
    expect(await snapshot(store)).toEqual(before);
    return results;
  }

  it(
    'a malformed or unreadable script or settings file: exit 2 (bad usage), the message names the file',
    async () => {
      const bad = await writeJson(path.join(p.cwd, 'bad.json'), {
        turns: [{ text: 'fine' }, { stop_reason: 'end_turn' }],
      });
      const notJson = path.join(p.cwd, 'broken.json');
      await writeFile(notJson, '{"turns": [');
      const badSettings = await writeJson(path.join(p.cwd, 'settings.json'), { hooks: { Stop: 'nope' } });
      const [r, r2, missing, noSettings, invalidSettings] = await unchanged(p.store, [
        ['run', '--script', bad, '--json', 'hi'],
        ['run', '--script', notJson, '--json', 'hi'],
        ['run', '--script', 'nope.json', '--json', 'hi'],
        ['run', '--script', p.script, '--settings', 'missing-settings.json', '--json', 'hi'],
        ['run', '--script', p.script, '--settings', badSettings, '--json', 'hi'],
      ]);
      for (const x of [r, r2, missing, noSettings, invalidSettings]) {
        expect(x!.code, x!.stderr).toBe(2);
        expect(x!.stdout).toBe('');
        // One line, with the error's code in brackets.
        expect(x!.stderr.trimEnd().split('\n'), x!.stderr).toHaveLength(1);
        expect(x!.stderr).toMatch(/^reloop: .* \[[A-Z_]+\]\n$/);
      }
      expect(r!.stderr).toContain('bad.json');
      expect(r!.stderr).toContain('turn 2');
      expect(r!.stderr).toMatch(/content|text/);
      expect(r!.stderr).toContain('[SCRIPT_INVALID]');
      expect(r2!.stderr).toMatch(/broken\.json.*not valid JSON/);
      expect(missing!.stderr).toContain('[SCRIPT_UNREADABLE]');
      expect(noSettings!.stderr).toContain('missing-settings.json');
      expect(invalidSettings!.stderr).toMatch(/settings\.json.*hooks\.Stop/);
    },
    SLOW,
  );

  it(
    'an unknown session id for log, replay, fork and viz: exit 1, the message names it',
    async () => {
      const argsList = [
        ['log', 's_doesNotExist', '--json'],
        ['replay', 's_doesNotExist', '--verify', '--json'],
        ['replay', 's_doesNotExist'],
        ['fork', 's_doesNotExist', '--at', '2', '--json'],
        ['viz', 's_doesNotExist'],
      ];
      const results = await unchanged(p.store, argsList);
      results.forEach((r, i) => {
        const what = argsList[i]!.join(' ');
        expect(r.code, what).toBe(1);
        expect(r.stdout, what).toBe('');
        expect(r.stderr, what).toContain('no session with id "s_doesNotExist"');
      });
    },
    SLOW,
  );

  it(
    'a fork point or a replay --to past the end of the log: exit 1, the message gives the range',
    async () => {
      const [r] = await unchanged(p.store, [['fork', p.run.sessionId, '--at', '9999', '--json']]);
      expect(r!.code).toBe(1);
      expect(r!.stdout).toBe('');
      expect(r!.stderr).toContain(`cannot fork ${p.run.sessionId} at seq 9999: the log has seqs 1..`);
      const replays = await unchanged(p.store, [
        ['replay', p.run.sessionId, '--to', '9999'],
        ['replay', p.run.sessionId, '--verify', '--to', '0', '--json'],
      ]);
      for (const [i, seq] of [9999, 0].entries()) {
        expect(replays[i]!.code).toBe(1);
        expect(replays[i]!.stdout).toBe('');
        expect(replays[i]!.stderr).toContain(
          `cannot replay ${p.run.sessionId} to seq ${seq}: the log has seqs 1..`,
        );
      }
    },
    SLOW,
  );

  it(
    'garbage in the middle of a .jsonl: log and replay exit 1 with the line number',
    async () => {
      const store = path.join(await freshDir('garbage'), 'store');
      await cp(p.store, store, { recursive: true });
      const file = path.join(store, 'sessions', `${p.run.sessionId}.jsonl`);
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines[4] = 'this is {not json';
      await writeFile(file, lines.join('\n'));
      const argsList = [
        ['log', p.run.sessionId, '--json'],
        ['replay', p.run.sessionId, '--verify', '--json'],
        ['replay', p.run.sessionId],
      ];
      const results = await unchanged(store, argsList);
      results.forEach((r, i) => {
        const what = argsList[i]!.join(' ');
        expect(r.code, what).toBe(1);
        expect(r.stderr, what).toContain(`${p.run.sessionId}.jsonl, line 5`);
        expect(r.stderr, what).toContain('not valid JSON');
      });
    },
    SLOW,
  );

  it(
    'a torn last line (a crash mid-write) is skipped with a readable warning; log still exits 0',
    async () => {
      const store = path.join(await freshDir('torn'), 'store');
      await cp(p.store, store, { recursive: true });
      const file = path.join(store, 'sessions', `${p.run.sessionId}.jsonl`);
      const lines = (await readFile(file, 'utf8')).split('\n').filter((l) => l !== '');
      await writeFile(file, `${lines.join('\n')}\n{"v":1,"seq":${lines.length + 1},"at":1,"sess`);
      const [r] = await unchanged(store, [['log', p.run.sessionId, '--json']]);
      expect(r!.code, r!.stderr).toBe(0);
      expect(jsonLines(r!.stdout)).toHaveLength(lines.length);
      expect(r!.stderr).toMatch(new RegExp(`^warning: .*line ${lines.length + 1}: torn last line`));
      expect(r!.stderr).not.toContain('{"code"');
    },
    SLOW,
  );

  it(
    'a record with "v":99: exit 1, the message says schema version',
    async () => {
      const store = path.join(await freshDir('v99'), 'store');
      await cp(p.store, store, { recursive: true });
      const file = path.join(store, 'sessions', `${p.run.sessionId}.jsonl`);
      const lines = (await readFile(file, 'utf8')).split('\n');
      const rec = JSON.parse(lines[2]!) as { v: number };
      rec.v = 99;
      lines[2] = JSON.stringify(rec);
      await writeFile(file, lines.join('\n'));
      const argsList = [
        ['log', p.run.sessionId, '--json'],
        ['replay', p.run.sessionId, '--verify', '--json'],
      ];
      const results = await unchanged(store, argsList);
      results.forEach((r, i) => {
        const what = argsList[i]!.join(' ');
        expect(r.code, what).toBe(1);
        expect(r.stderr, what).toMatch(/unsupported schema version 99 .* line 3 \(supported: 1, 2\)/);
      });
    },
    SLOW,
  );

  it(
    'bad usage exits 2: an unknown flag, --permission-mode nope, fork without --at, no key, …',
    async () => {
      const cases: { args: string[]; message: RegExp }[] = [
        {
          args: ['run', '--script', p.script, '--bogus', '--json', 'hi'],
          message: /unknown option '--bogus'/,
        },
        {
          args: ['run', '--script', p.script, '--permission-mode', 'nope', '--json', 'hi'],
          message: /--permission-mode must be one of default, acceptEdits, bypassPermissions, plan/,
        },
        { args: ['fork', p.run.sessionId, '--json'], message: /required option '--at <seq>'/ },
        { args: ['fork', p.run.sessionId, '--at', 'x', '--json'], message: /--at must be a whole number/ },
        { args: ['run', '--script', p.script, '--json'], message: /a prompt is required/ },
        { args: ['run', '--script', p.script, '--max-turns', '0', 'hi'], message: /--max-turns/ },
        { args: ['frobnicate'], message: /unknown command 'frobnicate'/ },
        // No ANTHROPIC_API_KEY (the helper's environment has none) and no --script.
        { args: ['run', '--json', 'hello'], message: /ANTHROPIC_API_KEY[\s\S]*--demo/ },
      ];
      const results = await unchanged(
        p.store,
        cases.map((c) => c.args),
      );
      results.forEach((r, i) => {
        const what = cases[i]!.args.join(' ');
        expect(r.code, what).toBe(2);
        expect(r.stdout, what).toBe('');
        expect(r.stderr, what).toMatch(cases[i]!.message);
      });
    },
    SLOW,
  );
});

describe('reloop run --demo', () => {
  it(
    'completes offline in a fresh directory, fixes the test, and its log verifies',
    async () => {
      const cwd = await freshDir('demo');
      const r = await runCli(['run', '--demo', '--json'], { cwd, timeoutMs: 60_000 });
      console.log(`reloop run --demo --json took ${Math.round(r.ms)} ms (wall, including process start)`);
      expect(r.code, r.stderr).toBe(0);
      const j = onlyJson<RunJson & { project: string; testPasses: boolean }>(r);
      try {
        expect(Object.keys(j).sort()).toEqual([...RUN_KEYS, 'project', 'testPasses'].sort());
        expect(j).toMatchObject({ status: 'completed', reason: 'completed', testPasses: true });
        expect(r.ms).toBeLessThan(30_000);
        // No --store: the default ./.reloop of the working directory.
        expect(await exists(path.join(cwd, '.reloop', 'sessions', `${j.sessionId}.jsonl`))).toBe(true);
        const log = await logOf(cwd, path.join(cwd, '.reloop'), j.sessionId);
        const reasons = log.flatMap((x) => (x.type === 'transition' ? [x.data.reason] : []));
        for (const reason of [
          'tool_result_continuation',
          'max_tokens_recovery',
          'transport_retry',
          'auto_compact',
          'stop_hook_continuation',
          'completed',
        ]) {
          expect(reasons, reason).toContain(reason);
        }
        // The compaction shrank the context, measured as its trigger measures it.
        const compaction = log.find((x) => x.type === 'compaction.finished');
        if (compaction?.type !== 'compaction.finished' || !compaction.data.ok)
          throw new Error('no compaction');
        expect(compaction.data.tokensBefore).toBeGreaterThan(2_800);
        expect(compaction.data.tokensAfter).toBeLessThan(compaction.data.tokensBefore);
        const v = await runCli(['replay', j.sessionId, '--verify', '--json'], { cwd });
        expect(v.code, v.stdout + v.stderr).toBe(0);
        expect(onlyJson(v)).toEqual({
          ok: true,
          records: log.length,
          transitions: log.filter((x) => x.type === 'transition').length,
          sealed: true,
          divergence: null,
        });
        // The demo's sub-agent: its own log, under the parent, verified with it.
        const child = log.find((x) => x.type === 'child.started');
        expect(child?.type === 'child.started' && child.data.agent).toBe('general-purpose');
        const tree = await runCli(['replay', j.sessionId, '--verify', '--tree', '--json'], { cwd });
        expect(tree.code, tree.stdout + tree.stderr).toBe(0);
        expect(onlyJson<{ sessions: unknown[] }>(tree).sessions).toHaveLength(2);
      } finally {
        if (j.project?.startsWith(tmpdir())) await rm(j.project, { recursive: true, force: true });
      }
    },
    SLOW,
  );
});
