import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { VirtualClock } from '../../src/runtime/determinism.ts';
import { Session, type SessionOptions } from '../../src/runtime/session.ts';
import { SetupChangedError } from '../../src/runtime/setup.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { EventStore } from '../../src/store/types.ts';
import { parseRecordLine } from '../../src/store/validate.ts';
import type { Tool } from '../../src/tools/types.ts';
import { echoTool, scriptedSession, textTurn } from '../support/harness.ts';

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

const system = 'You answer questions about tickets.';

async function recorded() {
  const h = await scriptedSession([textTurn('hello')], {
    tools: [lookupTicket, echoTool],
    settings: { system },
    permissions: { mode: 'default', rules: [{ source: 'cliArg', behavior: 'deny', rule: 'Bash' }] },
  });
  await h.session.submit('hi');
  return h;
}

const model = () => new ScriptedModelClient(parseScript({ turns: [textTurn('again')] }));

function open(store: EventStore, id: string, o: Partial<SessionOptions>) {
  return Session.open(id, { store, model: model(), clock: new VirtualClock(), ...o });
}

describe('resuming a session whose recorded setup differs', () => {
  it('is refused at its first run with one line naming each difference (SETUP_CHANGED), before anything is written', async () => {
    const h = await recorded();
    const before = (await h.records()).length;
    const reopened = await open(h.store, h.session.id, { tools: [echoTool] });
    const e = await reopened.submit('go on').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SetupChangedError);
    const err = e as SetupChangedError;
    expect(err.code).toBe('SETUP_CHANGED');
    expect(err.differences).toEqual([
      'tools: lookupTicket missing',
      'system prompt differs',
      'permission mode: default → none',
      'permission rules differ',
    ]);
    expect(err.message).toContain('tools: lookupTicket missing; system prompt differs');
    expect(err.message).not.toContain('\n');
    expect(await h.records()).toHaveLength(before);
  });

  it('names a changed schema, description, added tool, hooks and mode', async () => {
    const h = await recorded();
    const changed: Tool<{ id: number }> = {
      ...lookupTicket,
      inputSchema: z.object({ id: z.number() }),
    } as never;
    const extra = { ...echoTool, name: 'extra' };
    const s = await open(h.store, h.session.id, {
      tools: [changed, { ...echoTool, description: 'other' }, extra],
      settings: { system },
      hooks: { Stop: [{ hooks: [async () => ({})] }] },
      permissions: { mode: 'plan', rules: [{ source: 'cliArg', behavior: 'deny', rule: 'Bash' }] },
    });
    const e = (await s.submit(null).catch((x: unknown) => x)) as SetupChangedError;
    expect(e).toBeInstanceOf(SetupChangedError);
    expect(e.differences).toEqual([
      'tools: lookupTicket input schema differs, echo description differs, extra added',
      'hooks differ',
      'permission mode: default → plan',
    ]);
  });

  it('opens when the setup is the same, or with acceptSetupChange', async () => {
    const h = await recorded();
    const same = await open(h.store, h.session.id, {
      tools: [lookupTicket, echoTool],
      settings: { system },
      permissions: { mode: 'default', rules: [{ source: 'cliArg', behavior: 'deny', rule: 'Bash' }] },
    });
    expect(same.setupDifferences()).toEqual([]);
    const accepted = await open(h.store, h.session.id, { tools: [echoTool], acceptSetupChange: true });
    expect(accepted.setupDifferences()).toContain('tools: lookupTicket missing');
    const res = await accepted.submit('go on');
    expect(res.status).toBe('completed');
  });

  it('never refuses a session whose log has no recorded setup (written before run.setup)', async () => {
    const file = 'v1-demo.jsonl';
    const records = readFileSync(new URL(`../fixtures/logs/${file}`, import.meta.url), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line, i) => parseRecordLine(line, { file, line: i + 1 }));
    const store = new MemoryEventStore();
    const id = records[0]!.session;
    await store.append(id, records, { expectedSeq: 0 });
    const s = await open(store, id, { tools: [] });
    expect(s.state.setup).toBeNull();
    expect(s.setupDifferences()).toEqual([]);
  });
});
