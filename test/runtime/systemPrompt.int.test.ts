/**
 * The library's `systemPrompt` (Claude Agent SDK shape): what the real SDK sends to a loopback
 * Messages API, and what `run.started` records.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AnthropicModelClient } from '../../src/model/anthropic.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { DEFAULT_SYSTEM_PROMPT } from '../../src/runtime/config.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { type MessagesServer, startMessagesServer, textReply } from '../support/messagesServer.ts';

let server: MessagesServer;
beforeAll(async () => {
  server = await startMessagesServer();
});
afterAll(async () => {
  await server.close();
});

async function systemSent(options: Partial<SessionOptions>) {
  server.requests.length = 0;
  server.enqueue(textReply('ok'));
  const store = new MemoryEventStore();
  const session = await Session.create({
    store,
    model: new AnthropicModelClient({ apiKey: 'sk-test', baseURL: server.url }),
    clock: new VirtualClock(),
    random: seededRandom(1),
    ids: counterIds(),
    ...options,
  });
  expect((await session.submit('go')).status).toBe('completed');
  const records: LogRecord[] = [];
  for await (const r of store.read(session.id)) records.push(r);
  expect((await verifyReplay(records)).divergence).toBeNull();
  const started = records.find((r) => r.type === 'run.started');
  return {
    sent: server.requests[0]?.body.system,
    recorded: started?.type === 'run.started' ? started.data.config.system : undefined,
  };
}

describe('SessionOptions.systemPrompt', () => {
  it("absent: reloop's default prompt", async () => {
    expect(await systemSent({})).toEqual({ sent: DEFAULT_SYSTEM_PROMPT, recorded: DEFAULT_SYSTEM_PROMPT });
  });

  it('a string replaces the default (and wins over settings.system)', async () => {
    expect(await systemSent({ systemPrompt: 'You are terse.', settings: { system: 'old' } })).toEqual({
      sent: 'You are terse.',
      recorded: 'You are terse.',
    });
  });

  it("{ preset: 'default', append } is the default with the text after a blank line", async () => {
    const want = `${DEFAULT_SYSTEM_PROMPT}\n\nAlways answer in French.`;
    expect(
      await systemSent({ systemPrompt: { preset: 'default', append: 'Always answer in French.' } }),
    ).toEqual({
      sent: want,
      recorded: want,
    });
    expect(
      (
        await systemSent({
          systemPrompt: { type: 'preset', preset: 'claude_code', append: 'Always answer in French.' },
        })
      ).sent,
    ).toBe(want);
    expect((await systemSent({ systemPrompt: { preset: 'default' } })).sent).toBe(DEFAULT_SYSTEM_PROMPT);
  });
});
