/**
 * Issue 18, item 7: JSON nested thousands of levels deep, from a model's reply or a script. Before:
 * a reply 3 800 deep (with a secret in the environment, so every record is redacted) numbered a
 * record, threw in the redactor, and the next append failed `seq gap` — the session was left
 * `interrupted` with no record of why; a script 5 000 deep crashed `run`; `submit` of it left a
 * session without a job. Now the reply is `invalid_reply`, the script an error before anything is
 * written, and submit writes nothing.
 */
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { type MessagesServer, startMessagesServer, toolUseReply } from '../support/messagesServer.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';

let root: string;
let server: MessagesServer;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-deep-'));
  server = await startMessagesServer();
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

/** A script whose first turn calls Read with an input `depth` objects deep (written as text: too deep to stringify). */
async function deepScript(dir: string, depth: number): Promise<string> {
  const file = path.join(dir, 'deep.json');
  const input = `{"file_path":"x","deep":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;
  await writeFile(
    file,
    `{"turns":[{"content":[{"type":"tool_use","id":"t1","name":"Read","input":${input}}],"stop_reason":"tool_use"},{"text":"done"}]}`,
  );
  return file;
}

describe('deep JSON from a model or a script', () => {
  it('a reply nested 3 800 deep with a key in the environment: the run fails invalid_reply, the log is whole and verifies', async () => {
    const cwd = await mkdtemp(path.join(root, 'reply-'));
    server.enqueue(toolUseReply('Read', { file_path: 'x', deep: nested(3_800) }, { chunkSize: 1 << 20 }));
    const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef' };
    const run = await runCli(['run', '--store', 'st', '--json', 'go'], { cwd, env });
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).not.toMatch(/seq gap|INVALID_RECORD|Maximum call stack/);
    const [row] = onlyJson<{ id: string; status: string }[]>(
      await runCli(['sessions', '--store', 'st', '--json'], { cwd }),
    );
    expect(row?.status).toBe('failed');
    const log = jsonLines<LogRecord>(
      (await runCli(['log', row!.id, '--store', 'st', '--json'], { cwd })).stdout,
    );
    const failed = log.find((r) => r.type === 'model.failed');
    expect(failed?.data).toMatchObject({
      failure: {
        kind: 'fatal',
        errorType: 'invalid_reply',
        message: expect.stringMatching(/nested deeper than 512 levels/),
      },
    });
    expect(log.some((r) => r.type === 'tool.started')).toBe(false);
    expect(log.map((r) => r.seq)).toEqual(log.map((_, i) => i + 1));
    const verify = await runCli(['replay', row!.id, '--verify', '--store', 'st'], { cwd });
    expect(verify.code, verify.stderr).toBe(0);
  });

  it('a --script nested 5 000 deep: a script error naming the turn, exit 2, nothing written', async () => {
    const cwd = await mkdtemp(path.join(root, 'script-'));
    const script = await deepScript(cwd, 5_000);
    const run = await runCli(['run', '--store', 'st', '--script', script, 'go'], { cwd });
    expect(run.code, run.stderr).toBe(2);
    expect(run.stderr.trim()).toMatch(
      /^reloop: script \(.*deep\.json, turn 1\): content\.0: the reply's content block 0 \("tool_use"\) is nested deeper than 512 levels.*\[SCRIPT_INVALID\]$/,
    );
    expect(await readdir(cwd)).toEqual(['deep.json']);
  });
});

describePg('submit of a deep script on PostgreSQL', () => {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('exit 2 with the script error; no session without a job is left behind', async () => {
    const cwd = await mkdtemp(path.join(root, 'submit-'));
    const script = await deepScript(cwd, 5_000);
    const submit = await runCli(['submit', '--store', db!.url, '--script', script, '--json', 'go'], { cwd });
    expect(submit.code, submit.stderr).toBe(2);
    expect(submit.stderr).toMatch(/nested deeper than 512 levels.*\[SCRIPT_INVALID\]/);
    const rows = onlyJson<unknown[]>(await runCli(['sessions', '--store', db!.url, '--json'], { cwd }));
    expect(rows).toEqual([]);
  });
});
