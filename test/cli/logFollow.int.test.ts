/**
 * `reloop log <id> --follow` while `reloop run` writes the session in another process: it prints
 * what is there, then every record as it lands, and exits 0 when the run ends.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, runCli } from '../support/cli.ts';
import { startHeldRun } from '../support/heldRun.ts';

const SLOW = 120_000;
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-follow-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('reloop log --follow', () => {
  it(
    'prints the records as they land and exits 0 when the run in progress ends',
    async () => {
      const store = path.join(dir, 'store');
      const run = await startHeldRun(dir, store);
      const follow = spawn(
        process.execPath,
        [CLI_BIN, 'log', run.session, '--follow', '--json', '--store', store],
        {
          cwd: dir,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let out = '';
      let err = '';
      follow.stderr.setEncoding('utf8').on('data', (d: string) => {
        err += d;
      });
      // What was committed before the stop hook is printed while the run is still held there.
      await new Promise<void>((resolve) => {
        follow.stdout.setEncoding('utf8').on('data', (d: string) => {
          out += d;
          if (out.includes('"run.started"')) resolve();
        });
      });
      expect(out).not.toContain('"run.ended"');
      const exited = new Promise<number | null>((resolve) => follow.on('exit', (code) => resolve(code)));
      await run.release();
      expect(await run.exited, run.output()).toBe(0);
      expect(await exited, err).toBe(0);
      const log = await readFile(path.join(store, 'sessions', `${run.session}.jsonl`), 'utf8');
      expect(out).toBe(log);
      expect(out.trim().split('\n').at(-1)).toContain('"type":"run.ended"');
    },
    SLOW,
  );

  it(
    'prints and exits at once when no run is in progress; --to with --follow is bad usage',
    async () => {
      const store = path.join(dir, 'store');
      const [row] = JSON.parse(
        (await runCli(['sessions', '--json', '--store', store], { cwd: dir })).stdout,
      ) as {
        id: string;
      }[];
      const r = await runCli(['log', row!.id, '--follow', '--store', store, '--type', 'run.ended'], {
        cwd: dir,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('run.ended');
      const bad = await runCli(['log', row!.id, '--follow', '--to', '3', '--store', store], { cwd: dir });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--follow cannot be combined with --to');
      const missing = await runCli(['log', 'nope', '--follow', '--store', store], { cwd: dir });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('[SESSION_NOT_FOUND]');
    },
    SLOW,
  );
});
