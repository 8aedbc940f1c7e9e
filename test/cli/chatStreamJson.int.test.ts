/**
 * `reloop run --output-format stream-json`: one JSON event per line on stdout, the events of
 * `session.stream()`, against the loopback Messages API; the events match the log.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionEventSchema } from '../../src/runtime/streamEvents.ts';
import { runCli } from '../support/cli.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const SLOW = 180_000;
let root: string;
let server: MessagesServer;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-stream-json-'));
  server = await startMessagesServer({ apiKey: 'sk-test' });
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

describe('run --output-format stream-json', () => {
  it(
    'prints init, deltas, the tool call and result, every transition and the result, one per line',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'p-'));
      await writeFile(path.join(cwd, 'todo.txt'), 'ship it\n');
      server.enqueue(
        toolUseReply('Glob', { pattern: '*.txt' }, { toolUseId: 'toolu_glob_1', text: 'Looking.' }),
        textReply('There is todo.txt.', { chunkSize: 3 }),
      );
      const r = await runCli(
        ['run', '--model', 'claude-sonnet-4-6', '--store', 'st', '--output-format', 'stream-json', 'List.'],
        { cwd, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' } },
      );
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      const events = lines.map((l) => SessionEventSchema.parse(JSON.parse(l)));
      expect(events[0]).toMatchObject({ type: 'system', subtype: 'init', model: 'claude-sonnet-4-6' });
      const last = events.at(-1)!;
      expect(last).toMatchObject({
        type: 'result',
        subtype: 'success',
        result: 'There is todo.txt.',
        num_turns: 2,
      });
      const text = events
        .flatMap((e) =>
          e.type === 'stream_event' &&
          e.event.type === 'content_block_delta' &&
          e.event.delta.type === 'text_delta'
            ? [e.event.delta.text]
            : [],
        )
        .join('');
      expect(text).toBe('Looking.There is todo.txt.');
      expect(events.find((e) => e.type === 'system' && e.subtype === 'tool_call')).toMatchObject({
        name: 'Glob',
        input: { pattern: '*.txt' },
      });
      expect(events.find((e) => e.type === 'system' && e.subtype === 'tool_result')).toMatchObject({
        content: 'todo.txt',
        outcome: 'ok',
      });
      // The transitions are the log's, in its order.
      const sessionId = last.session_id;
      const log = (await readFile(path.join(cwd, 'st', 'sessions', `${sessionId}.jsonl`), 'utf8'))
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l) as { seq: number; type: string; data: { reason?: string } });
      const reasons = log.filter((x) => x.type === 'transition').map((x) => x.data.reason);
      expect(
        events.flatMap((e) => (e.type === 'system' && e.subtype === 'transition' ? [e.reason] : [])),
      ).toEqual(reasons);
      expect(last.type === 'result' && last.seq).toBe(log.at(-1)!.seq);
    },
    SLOW,
  );

  it(
    'an unknown format is bad usage',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'bad-'));
      const r = await runCli(['run', '--output-format', 'xml', 'hi'], { cwd });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--output-format must be text, json or stream-json');
    },
    SLOW,
  );
});
