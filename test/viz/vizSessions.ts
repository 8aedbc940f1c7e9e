import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { forkSession } from '../../src/replay/fork.ts';
import { counterIds, seededRandom, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { LogRecord } from '../../src/store/records.ts';
import type { EventStore } from '../../src/store/types.ts';
import { echoTool, fixedStopHook, scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

/** A payload that must stay text wherever the viewer shows log content. */
export const XSS_SCRIPT = '<script>window.__pwned=1</script>';
export const XSS_BREAKOUT = '</script><img src=x onerror=window.__pwned=2>';

const big = { input_tokens: 900, output_tokens: 60 };

/**
 * A session worth looking at: two runs; tool rounds, a 529 with a transport retry, an
 * auto-compaction, a stop-hook block, a max-tokens escalation; tool input and output carrying
 * HTML that must never execute in the viewer.
 */
export async function interestingSession(store?: EventStore): Promise<{ id: string; records: LogRecord[] }> {
  const h = await scriptedSession(
    [
      toolTurn([
        { name: 'echo', input: { text: 'read src/sum.ts' }, id: 'tu_read' },
        { name: 'echo', input: { text: XSS_SCRIPT }, id: 'tu_xss' },
      ]),
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
      { ...toolTurn([{ name: 'echo', input: { text: XSS_BREAKOUT }, id: 'tu_breakout' }]), usage: big },
      {
        text: 'Goal: make the test pass. Done: read sum.ts, ran the tests. Next: fix the off-by-one.',
        for: 'compaction',
        usage: { input_tokens: 1200, output_tokens: 80 },
      },
      {
        text: 'Partial answer, cut at the c',
        stop_reason: 'max_tokens',
        usage: { input_tokens: 300, output_tokens: 8192 },
      },
      textTurn('Fixed the off-by-one in sum.ts; the test passes.', 'end_turn', {
        input_tokens: 320,
        output_tokens: 40,
      }),
      textTurn('Added a regression test as the hook asked.', 'end_turn', {
        input_tokens: 360,
        output_tokens: 30,
      }),
      toolTurn([{ name: 'echo', input: { text: 'npm test' }, id: 'tu_test' }]),
      textTurn('All 12 tests pass.', 'end_turn', { input_tokens: 400, output_tokens: 12 }),
    ],
    {
      settings: { autoCompactThreshold: 900 },
      stopHooks: [
        fixedStopHook([{ decision: 'block', reason: 'add a regression test' }, { decision: 'allow' }]),
      ],
      title: 'fix the failing sum test',
      ...(store ? { store } : {}),
    },
  );
  await h.session.submit(`fix the failing test ${XSS_SCRIPT}`);
  await h.session.submit(`now run the tests again ${XSS_BREAKOUT}`);
  return { id: h.session.id, records: await h.records() };
}

/** A long session: `rounds` tool rounds in one run, for size checks. */
export async function longSession(rounds: number): Promise<LogRecord[]> {
  const turns: unknown[] = [];
  for (let i = 0; i < rounds; i++)
    turns.push(toolTurn([{ name: 'echo', input: { text: `step ${i}: ${'x'.repeat(200)}` }, id: `tu_${i}` }]));
  turns.push(textTurn('done'));
  const h = await scriptedSession(turns, { settings: { maxTurns: rounds + 5 } });
  await h.session.submit('loop for a while');
  return h.records();
}

/**
 * A fork and its source: the interesting session forked where its first run ended (seq 56),
 * then resumed with another prompt and another answer, while the source went on to a second run.
 */
export async function forkedSession(): Promise<{ source: LogRecord[]; fork: LogRecord[]; forkId: string }> {
  const store = new MemoryEventStore();
  const { id, records: source } = await interestingSession(store);
  const forkId = await forkSession(store, id, 56, counterIds('fork-'));
  const session = await Session.open(forkId, {
    store,
    model: new ScriptedModelClient(
      parseScript({ turns: [textTurn(`Took another road after the fork. ${XSS_BREAKOUT}`)] }),
    ),
    clock: new VirtualClock(),
    random: seededRandom(7),
    ids: counterIds('f-'),
    cwd: process.cwd(),
    tools: [echoTool],
    // Resumed without the source's hooks on purpose.
    acceptSetupChange: true,
  });
  await session.submit(`try another way ${XSS_SCRIPT}`);
  const fork: LogRecord[] = [];
  for await (const r of store.read(forkId)) fork.push(r);
  return { source, fork, forkId };
}
