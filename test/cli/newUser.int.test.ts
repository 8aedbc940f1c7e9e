/**
 * What a new user ran into, each kept fixed: read-only commands never create a store, a store
 * path that cannot be made fails at once, flags that can match nothing say so, connections
 * that can never succeed are not retried, plurals, the version. Every bad input: one line on
 * stderr with a code, the documented exit status, nothing written.
 */
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { type CliResult, jsonLines, onlyJson, REPO_ROOT, runCli } from '../support/cli.ts';
import { exists } from '../support/files.ts';

const SLOW = 120_000;

let root: string;
let project: string;
let script: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-newuser-'));
  project = path.join(root, 'project');
  await mkdir(project);
  script = path.join(root, 'hello.json');
  await writeFile(script, JSON.stringify({ turns: [{ text: 'hello' }] }));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** One line on stderr, `reloop: …`, ending with the error's code in brackets. */
function expectOneLineError(r: CliResult, exit: number, code: string, what = ''): void {
  expect(r.code, `${what}\n${r.stderr}`).toBe(exit);
  expect(r.stdout, what).toBe('');
  expect(r.stderr, what).toMatch(new RegExp(`^reloop: [^\\n]+ \\[${code}\\]\\n$`));
}

describe('the store', () => {
  it(
    'read-only commands on a missing store: exit 1 naming it, and no store is created',
    async () => {
      const missing = path.join(root, 'no-store-here');
      const argsList = [
        ['sessions'],
        ['sessions', '--json'],
        ['log', 's_x'],
        ['replay', 's_x', '--verify'],
        ['viz', 's_x'],
        ['coverage', '--json'],
        ['fork', 's_x', '--at', '1'],
      ];
      const results = await Promise.all(
        argsList.map((a) => runCli([...a, '--store', missing], { cwd: project })),
      );
      results.forEach((r, i) => {
        const what = argsList[i]!.join(' ');
        expectOneLineError(r, 1, 'NO_STORE', what);
        expect(r.stderr, what).toContain(`no store at ${missing}`);
      });
      expect(await exists(missing)).toBe(false);
      // The default store (./.reloop) is not created either.
      const dflt = await runCli(['sessions'], { cwd: project });
      expectOneLineError(dflt, 1, 'NO_STORE');
      expect(await readdir(project)).toEqual([]);
    },
    SLOW,
  );

  it(
    'a directory that is not a store is left alone',
    async () => {
      const r = await runCli(['log', 's_x', '--store', project], { cwd: project });
      expectOneLineError(r, 1, 'NO_STORE');
      expect(r.stderr).toContain('is not a reloop store');
      expect(await readdir(project)).toEqual([]);
    },
    SLOW,
  );

  it(
    '--store under a directory that refuses new entries (/proc) fails at once instead of hanging',
    async () => {
      const [ls, run] = await Promise.all([
        runCli(['sessions', '--store', '/proc/reloop-store'], { cwd: project, timeoutMs: 30_000 }),
        runCli(['run', '--script', script, '--store', '/proc/reloop-store', '--json', 'hi'], {
          cwd: project,
          timeoutMs: 30_000,
        }),
      ]);
      expectOneLineError(ls, 1, 'NO_STORE');
      expectOneLineError(run, 1, 'STORE_UNUSABLE');
      expect(run.stderr).toContain('/proc/reloop-store');
    },
    SLOW,
  );
});

describe('reloop run', () => {
  it(
    '--cwd that does not exist or is not a directory: exit 2 before anything runs or is written',
    async () => {
      const store = path.join(root, 'cwd-store');
      const file = path.join(root, 'a-file');
      await writeFile(file, 'x');
      const [missing, notDir] = await Promise.all([
        runCli(['run', '--script', script, '--cwd', '/does/not/exist', '--store', store, 'hi'], {
          cwd: project,
        }),
        runCli(['run', '--script', script, '--cwd', file, '--store', store, 'hi'], { cwd: project }),
      ]);
      expectOneLineError(missing, 2, 'CWD_INVALID');
      expect(missing.stderr).toContain('--cwd /does/not/exist: no such directory');
      expectOneLineError(notDir, 2, 'CWD_INVALID');
      expect(notDir.stderr).toContain('not a directory');
      expect(await exists(store)).toBe(false);
    },
    SLOW,
  );

  it(
    'an --allow rule that does not parse is bad usage, like any other flag value',
    async () => {
      const store = path.join(root, 'rule-store');
      const r = await runCli(
        ['run', '--script', script, '--allow', 'Bash(npm test', '--store', store, 'hi'],
        {
          cwd: project,
        },
      );
      expectOneLineError(r, 2, 'INVALID_PERMISSION_RULE');
      expect(await exists(store)).toBe(false);
    },
    SLOW,
  );

  it(
    'a one-turn run says "1 turn", and its replay "1 run"',
    async () => {
      const store = path.join(root, 'plural-store');
      const r = await runCli(['run', '--script', script, '--store', store, 'hi'], { cwd: project });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('completed (completed) after 1 turn —');
      const id = /session (s_\S+)/.exec(r.stdout)![1]!;
      const v = await runCli(['replay', id, '--verify', '--store', store], { cwd: project });
      expect(v.stdout).toMatch(/^ok: \d+ records, \d+ transitions in 1 run replay identically\n$/);
    },
    SLOW,
  );

  describe('connections that can never succeed', () => {
    let closedPort: number;
    let notHttp: ReturnType<typeof createServer>;
    let notHttpPort: number;
    beforeAll(async () => {
      // A port nobody listens on: bound, then closed.
      const probe = createServer().listen(0, '127.0.0.1');
      await new Promise((r) => probe.once('listening', r));
      closedPort = (probe.address() as { port: number }).port;
      await new Promise((r) => probe.close(r));
      notHttp = createServer((socket) => {
        socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6\r\n'));
      }).listen(0, '127.0.0.1');
      await new Promise((r) => notHttp.once('listening', r));
      notHttpPort = (notHttp.address() as { port: number }).port;
    });
    afterAll(async () => {
      await new Promise((r) => notHttp.close(r));
    });

    async function runAgainst(baseUrl: string, extra: string[] = []) {
      const store = path.join(root, `conn-${Math.random().toString(36).slice(2)}`);
      const r = await runCli(
        ['run', '--model', 'claude-sonnet-4-6', '--store', store, '--json', ...extra, 'hi'],
        {
          cwd: project,
          env: { ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: 'sk-test' },
        },
      );
      const id = onlyJson<{ sessionId: string }>(r).sessionId;
      const log = await runCli(['log', id, '--json', '--store', store], { cwd: project });
      return { r, records: jsonLines<LogRecord>(log.stdout) };
    }

    it.each([
      ['a port fetch refuses to use', () => 'http://127.0.0.1:6000', /API URL cannot be used/],
      ['a scheme fetch cannot speak', () => 'htp://127.0.0.1:1', /API URL cannot be used/],
      [
        'a server that does not speak HTTP',
        () => `http://127.0.0.1:${notHttpPort}`,
        /did not answer in HTTP/,
      ],
    ])(
      '%s: model_error after one attempt, naming ANTHROPIC_BASE_URL',
      async (_what, url, message) => {
        const { r, records } = await runAgainst(url());
        expect(r.code).toBe(1);
        expect(onlyJson(r)).toMatchObject({ status: 'failed', reason: 'model_error' });
        expect(records.filter((x) => x.type === 'model.requested')).toHaveLength(1);
        const failed = records.find((x) => x.type === 'model.failed');
        expect(failed?.data).toMatchObject({ failure: { kind: 'fatal' } });
        expect(JSON.stringify(failed?.data)).toMatch(message);
        expect(JSON.stringify(failed?.data)).toContain('ANTHROPIC_BASE_URL');
      },
      SLOW,
    );

    it(
      '--max-attempts bounds the attempts of a refused connection (which may come up, so it is retried)',
      async () => {
        const { r, records } = await runAgainst(`http://127.0.0.1:${closedPort}`, ['--max-attempts', '2']);
        expect(r.code).toBe(1);
        expect(onlyJson(r)).toMatchObject({ status: 'failed', reason: 'model_error' });
        expect(records.filter((x) => x.type === 'model.requested')).toHaveLength(2);
        expect(records.filter((x) => x.type === 'backoff.scheduled')).toHaveLength(1);
        const bad = await runCli(['run', '--script', script, '--max-attempts', '0', 'hi'], { cwd: project });
        expectOneLineError(bad, 2, 'USAGE');
        expect(bad.stderr).toContain('--max-attempts must be a whole number ≥ 1');
      },
      SLOW,
    );
  });
});

describe('reloop log', () => {
  let store: string;
  let id: string;
  beforeAll(async () => {
    store = path.join(root, 'log-store');
    const r = await runCli(['run', '--script', script, '--store', store, '--json', 'hi'], { cwd: project });
    id = onlyJson<{ sessionId: string }>(r).sessionId;
  }, SLOW);

  it(
    'a --type or a range that can match nothing says what is wrong',
    async () => {
      const [type, range, zero, past] = await Promise.all([
        runCli(['log', id, '--type', 'nosuchtype', '--store', store], { cwd: project }),
        runCli(['log', id, '--from', '20', '--to', '10', '--store', store], { cwd: project }),
        runCli(['log', id, '--from', '0', '--store', store], { cwd: project }),
        runCli(['log', id, '--from', '9999', '--store', store], { cwd: project }),
      ]);
      expectOneLineError(type, 2, 'USAGE');
      expect(type.stderr).toContain('--type "nosuchtype" is not a record type; one of: session.created,');
      expectOneLineError(range, 2, 'USAGE');
      expect(range.stderr).toContain('--from 20 is after --to 10');
      expectOneLineError(zero, 2, 'USAGE');
      expectOneLineError(past, 1, 'SEQ_RANGE');
      expect(past.stderr).toMatch(/--from 9999 is past the end of s_\S+: the log has seqs 1\.\.\d+/);
    },
    SLOW,
  );
});

describe('the program', () => {
  it(
    '--version and -V print the package version; an unknown flag is one line with a code',
    async () => {
      const { version } = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8'));
      const [long, short, bad] = await Promise.all([
        runCli(['--version'], { cwd: project }),
        runCli(['-V'], { cwd: project }),
        runCli(['sessions', '--bogus'], { cwd: project }),
      ]);
      expect(long).toMatchObject({ code: 0, stdout: `${version}\n` });
      expect(short).toMatchObject({ code: 0, stdout: `${version}\n` });
      expectOneLineError(bad, 2, 'USAGE');
      expect(bad.stderr).toContain("unknown option '--bogus'");
    },
    SLOW,
  );
});
