import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { HooksOption } from '../../src/hooks/types.ts';
import { recordedRequests, requestOf } from '../../src/replay/requests.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { fold } from '../../src/store/evolve.ts';
import type { RecordOf } from '../../src/store/records.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import type { Tool } from '../../src/tools/types.ts';
import { echoTool, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';
import { representativeLogs } from './support/representativeLogs.ts';

const lookupTicket: Tool<{ id: string }> = {
  name: 'lookupTicket',
  description: 'Looks a ticket up by its id.',
  inputSchema: z.object({ id: z.string() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call(input) {
    return { content: `ticket ${input.id}: open` };
  },
};

const hooks: HooksOption = {
  UserPromptSubmit: [{ hooks: [async () => ({ hookSpecificOutput: { additionalContext: 'be brief' } })] }],
  PreToolUse: [{ matcher: 'lookupTicket', hooks: [async () => ({})], source: 'projectSettings' }],
};

async function recorded() {
  const sent: unknown[] = [];
  const h = await scriptedSession(
    [
      toolTurn([{ name: 'lookupTicket', input: { id: 'T-1' }, id: 't1' }]),
      textTurn('T-1 is open'),
      toolTurn([{ name: 'echo', input: { text: 'x' }, id: 't2' }]),
      textTurn('done'),
    ],
    {
      tools: [lookupTicket, echoTool],
      settings: { system: 'You answer questions about tickets.' },
      hooks,
      permissions: {
        mode: 'default',
        rules: [{ source: 'cliArg', behavior: 'allow', rule: 'lookupTicket' }],
      },
      memoryFiles: [{ path: '/repo/CLAUDE.md', sha256: 'abc' }],
    },
  );
  // The chart's history array grows after a request: each is copied as it is sent.
  const stream = h.client.stream.bind(h.client);
  h.client.stream = (request, o) => {
    sent.push(JSON.parse(JSON.stringify(request)));
    return stream(request, o);
  };
  await h.session.submit('what about T-1?');
  await h.session.submit('and echo x');
  return { ...h, sent: () => sent };
}

describe('a session records its setup (run.setup)', () => {
  it('holds the tools with their schemas, the hooks, the permission rules and the memory files; a later run refers to the same tool list', async () => {
    const h = await recorded();
    const records = await h.records();
    const setups = records.filter((r): r is RecordOf<'run.setup'> => r.type === 'run.setup');
    expect(setups).toHaveLength(2);
    const [first, second] = setups as [RecordOf<'run.setup'>, RecordOf<'run.setup'>];
    expect(first.data.tools?.map((t) => t.name)).toEqual(['lookupTicket', 'echo']);
    expect(first.data.tools?.[0]).toEqual({
      name: 'lookupTicket',
      description: 'Looks a ticket up by its id.',
      inputSchema: expect.objectContaining({ type: 'object', properties: { id: { type: 'string' } } }),
    });
    expect(first.data.hooks).toEqual([
      { source: 'session', event: 'UserPromptSubmit', matcher: null, command: 'callback', timeout: null },
      {
        source: 'projectSettings',
        event: 'PreToolUse',
        matcher: 'lookupTicket',
        command: 'callback',
        timeout: null,
      },
    ]);
    expect(first.data.permissions).toEqual({
      mode: 'default',
      rules: [{ source: 'cliArg', behavior: 'allow', rule: 'lookupTicket' }],
      callback: false,
    });
    expect(first.data.memory).toEqual([{ path: '/repo/CLAUDE.md', sha256: 'abc' }]);
    // Stored once: the second run refers to the first run's list.
    expect(second.data.tools).toBeUndefined();
    expect(second.data.toolsFrom).toBe(first.seq);
    // Beside run.started, before the run's first transition.
    const at = records.indexOf(first);
    expect(records[at - 1]?.type).toBe('run.started');
    const state = fold(records, emptySessionState());
    expect(state.setup?.seq).toBe(second.seq);
    expect(state.setup?.tools).toEqual(first.data.tools);
    expect((await verifyReplay(records)).ok).toBe(true);
  });

  it('every request is rebuilt from the setup and the log exactly as the model got it', async () => {
    const h = await recorded();
    const rebuilt = [...recordedRequests(await h.records())].map(requestOf);
    expect(rebuilt).toHaveLength(4);
    expect(JSON.parse(JSON.stringify(rebuilt))).toEqual(h.sent());
  });

  it("rebuilds each request's history to the size the log says, in every representative log", async () => {
    for (const [name, records] of Object.entries(await representativeLogs())) {
      const requested = new Map(
        records.flatMap((r) => (r.type === 'model.requested' ? [[r.seq, r.data.messageCount] as const] : [])),
      );
      for (const r of recordedRequests(records)) {
        expect(requestOf(r).messages.length, `${name} seq ${r.seq}`).toBe(requested.get(r.seq));
        expect(r.tools, `${name} seq ${r.seq}`).not.toBeNull();
      }
    }
  });

  it('a toolsFrom that does not point at the list is a reference error', async () => {
    const records = await (await recorded()).records();
    const second = records.filter((r) => r.type === 'run.setup')[1] as RecordOf<'run.setup'>;
    second.data.toolsFrom = 1;
    expect(() => fold(records, emptySessionState())).toThrow(/run.setup toolsFrom 1/);
  });
});
