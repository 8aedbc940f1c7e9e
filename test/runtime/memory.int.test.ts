/**
 * The library's CLAUDE.md memory: read only when `SessionOptions.memory` names sources, once per
 * run, a run that read the same files refers to the earlier record, and what the real SDK sent.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../src/model/anthropic.ts';
import { recordedRequests, requestOf } from '../../src/replay/requests.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { type MessagesServer, startMessagesServer, textReply } from '../support/messagesServer.ts';

let server: MessagesServer;
let dir: string;
beforeAll(async () => {
  server = await startMessagesServer();
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-lib-memory-'));
  await mkdir(path.join(dir, '.git'));
  await writeFile(path.join(dir, 'CLAUDE.md'), 'Use pnpm.\n');
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

async function session(options: Partial<SessionOptions>) {
  const store = new MemoryEventStore();
  const s = await Session.create({
    store,
    model: new AnthropicModelClient({ apiKey: 'sk-test', baseURL: server.url }),
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds(),
    cwd: dir,
    ...options,
  });
  const records = async () => {
    const out: LogRecord[] = [];
    for await (const r of store.read(s.id)) out.push(r);
    return out;
  };
  return { s, records };
}

const firstText = (i: number) =>
  (server.requests[i]?.body.messages?.[0] as { content: string | { text: string }[] }).content;

describe('SessionOptions.memory', () => {
  it('absent: no memory is read, even with a CLAUDE.md in the working directory', async () => {
    server.requests.length = 0;
    server.enqueue(textReply('ok'));
    const { s, records } = await session({});
    await s.submit('go');
    expect(firstText(0)).toBe('go');
    expect((await records()).some((r) => r.type === 'memory.loaded')).toBe(false);
  });

  it("settingSources (the Agent SDK's name) reads the memory of those sources when memory is not given", async () => {
    server.requests.length = 0;
    server.enqueue(textReply('ok'), textReply('ok'));
    const project = await session({ settingSources: ['project'] });
    await project.s.submit('go');
    expect((firstText(0) as { text: string }[])[0]!.text).toContain('Contents of');
    const userOnly = await session({ settingSources: ['user'], memory: { sources: [] } });
    await userOnly.s.submit('go');
    expect(firstText(1)).toBe('go');
  });

  it('each run reads it; unchanged files refer to the earlier record, changed ones are recorded again', async () => {
    server.requests.length = 0;
    server.enqueue(textReply('one'), textReply('two'), textReply('three'));
    const { s, records } = await session({ memory: { sources: ['project'] } });
    await s.submit('first');
    await s.submit('second');
    await writeFile(path.join(dir, 'CLAUDE.md'), 'Use npm.\n');
    await s.submit('third');
    const loaded = (await records()).filter((r) => r.type === 'memory.loaded');
    expect(loaded.map((r) => (r.type === 'memory.loaded' ? r.data : null))).toEqual([
      { files: [{ path: path.join(dir, 'CLAUDE.md'), source: 'project', content: 'Use pnpm.\n' }] },
      { filesFrom: loaded[0]!.seq },
      { files: [{ path: path.join(dir, 'CLAUDE.md'), source: 'project', content: 'Use npm.\n' }] },
    ]);
    // Every run's first user turn carries the memory of its own record.
    const memoryOf = (i: number) => (firstText(i) as { text: string }[])[0]!.text;
    expect(memoryOf(0)).toContain('Use pnpm.');
    expect(memoryOf(1)).toContain('Use pnpm.');
    expect(memoryOf(2)).toContain('Use npm.');
    expect(s.state.memory?.seq).toBe(loaded[2]!.seq);
    expect((await verifyReplay(await records())).divergence).toBeNull();
    // The requests rebuilt from the log carry the memory as it was sent.
    const rebuilt = [...recordedRequests(await records())].map(requestOf);
    expect(rebuilt.map((r) => r.messages[0])).toEqual(
      [0, 1, 2].map((i) => server.requests[i]?.body.messages?.[0]),
    );
  });
});
