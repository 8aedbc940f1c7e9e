/**
 * The library's `settingSources` (the Claude Agent SDK's; default none): the settings files named
 * give the session their permission rules and hooks, with an injectable home, as `reloop run`
 * reads them. The real SDK against the loopback Messages API, the real tools.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../src/model/anthropic.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord, RecordOf } from '../../src/store/records.ts';
import { builtinTools } from '../../src/tools/builtin/index.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

let server: MessagesServer;
let dir: string;
let home: string;
beforeAll(async () => {
  server = await startMessagesServer();
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-lib-settings-'));
  home = path.join(dir, 'home');
  const cwd = path.join(dir, 'p');
  await mkdir(path.join(cwd, '.claude'), { recursive: true });
  await mkdir(path.join(home, '.claude'), { recursive: true });
  await writeFile(path.join(cwd, 'secret.txt'), 'SECRET');
  await writeFile(
    path.join(cwd, '.claude', 'settings.json'),
    JSON.stringify({ permissions: { deny: ['Read(secret.txt)'] } }),
  );
  await writeFile(
    path.join(home, '.claude', 'settings.json'),
    JSON.stringify({ permissions: { allow: ['Bash(echo hi)'] } }),
  );
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function runOnce(options: Partial<SessionOptions>, name: string, input: unknown) {
  const store = new MemoryEventStore();
  server.enqueue(toolUseReply(name, input, { toolUseId: 'toolu_1' }), textReply('done'));
  const s = await Session.create({
    store,
    model: new AnthropicModelClient({ apiKey: 'sk-test', baseURL: server.url }),
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds(),
    cwd: path.join(dir, 'p'),
    tools: builtinTools(),
    managedSettingsFile: null,
    ...options,
  });
  await s.submit('go');
  const out: LogRecord[] = [];
  for await (const r of store.read(s.id)) out.push(r);
  return out
    .filter((r): r is RecordOf<'permission.decided'> => r.type === 'permission.decided')
    .map((r) => ({ resolved: r.data.resolved, by: r.data.by }));
}

describe('SessionOptions.settingSources', () => {
  it('absent: no settings file is read (the deny rule does not apply)', async () => {
    expect(await runOnce({}, 'Read', { file_path: 'secret.txt' })).toMatchObject([{ resolved: 'allow' }]);
  });

  it("['project']: the project's deny rule stops the read, named by its source", async () => {
    expect(await runOnce({ settingSources: ['project'] }, 'Read', { file_path: 'secret.txt' })).toEqual([
      { resolved: 'deny', by: 'projectSettings deny Read(secret.txt)' },
    ]);
  });

  it("['user'] with settingsHome: the user's allow rule from that home allows", async () => {
    expect(
      await runOnce({ settingSources: ['user'], settingsHome: home }, 'Bash', { command: 'echo hi' }),
    ).toEqual([{ resolved: 'allow', by: 'userSettings allow Bash(echo hi)' }]);
    // Another home has no such rule: the call is asked, and canUseTool answers the ask.
    const other = path.join(dir, 'nohome');
    expect(
      await runOnce(
        {
          settingSources: ['user'],
          settingsHome: other,
          canUseTool: () => ({ behavior: 'deny', message: 'no', by: 'my callback' }),
        },
        'Bash',
        { command: 'echo hi' },
      ),
    ).toEqual([{ resolved: 'deny', by: 'my callback' }]);
  });
});
