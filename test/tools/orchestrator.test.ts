import { getEventListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ToolUseBlock } from '../../src/model/messages.ts';
import {
  type BatchOptions,
  type HookReport,
  type PermissionReport,
  runToolBatch,
  type StartedCall,
  type ToolCallReport,
} from '../../src/tools/orchestrator.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import type { AnyTool, PermissionRequest, Tool, ToolContext } from '../../src/tools/types.ts';
import { echoTool, scriptedSession, textTurn } from '../support/harness.ts';

/** Counts calls in flight; every call yields to the event loop once, so parallel calls overlap. */
function meter() {
  const m = { inFlight: 0, max: 0, events: [] as string[] };
  const tool = (name: string, safe: boolean): Tool<{ n: number }> => ({
    name,
    description: name,
    inputSchema: z.object({ n: z.number() }),
    isReadOnly: safe,
    isConcurrencySafe: () => safe,
    async call({ n }) {
      m.inFlight++;
      m.max = Math.max(m.max, m.inFlight);
      m.events.push(`start ${n}`);
      await new Promise((r) => setImmediate(r));
      m.events.push(`end ${n}`);
      m.inFlight--;
      return { content: `${name} ${n}` };
    },
  });
  return { m, tool };
}

const use = (id: string, name: string, input: unknown): ToolUseBlock => ({
  type: 'tool_use',
  id,
  name,
  input,
});

function observed() {
  const o = {
    started: [] as StartedCall[][],
    finished: [] as ToolCallReport[],
    permissions: [] as PermissionReport[],
    hooks: [] as HookReport[],
  };
  return {
    o,
    observer: {
      beforeRun: async (calls: StartedCall[]) => {
        o.started.push(calls);
      },
      onFinished: (r: ToolCallReport) => o.finished.push(r),
      onPermission: (p: PermissionReport) => o.permissions.push(p),
      onHook: (h: HookReport) => o.hooks.push(h),
    },
  };
}

function batch(tools: AnyTool[], toolUses: ToolUseBlock[], extra: Partial<BatchOptions> = {}): BatchOptions {
  return {
    registry: new ToolRegistry(tools),
    toolUses,
    signal: new AbortController().signal,
    cwd: '/work',
    session: { sessionId: 's1', fileRead: () => undefined },
    canUseTool: () => ({ behavior: 'allow' }),
    ...extra,
  };
}

describe('runToolBatch: concurrency', () => {
  it('consecutive concurrency-safe calls run in parallel, at most 10 at once, results in order', async () => {
    const { m, tool } = meter();
    const safe = tool('safe', true);
    const uses = Array.from({ length: 25 }, (_, i) => use(`u${i}`, 'safe', { n: i }));
    const { o, observer } = observed();
    const out = await runToolBatch(batch([safe], uses), observer);
    expect(m.max).toBe(10);
    expect(out.results.map((r) => r.content)).toEqual(uses.map((_, i) => `safe ${i}`));
    expect(out.results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id));
    expect(out.aborted).toBe(false);
    expect(o.finished).toHaveLength(25);
  });

  it('maxConcurrency lowers the limit', async () => {
    const { m, tool } = meter();
    const uses = Array.from({ length: 7 }, (_, i) => use(`u${i}`, 'safe', { n: i }));
    await runToolBatch(batch([tool('safe', true)], uses, { maxConcurrency: 3 }), observed().observer);
    expect(m.max).toBe(3);
  });

  it('unsafe calls run one by one', async () => {
    const { m, tool } = meter();
    const uses = Array.from({ length: 4 }, (_, i) => use(`u${i}`, 'unsafe', { n: i }));
    const out = await runToolBatch(batch([tool('unsafe', false)], uses), observed().observer);
    expect(m.max).toBe(1);
    expect(m.events).toEqual([
      'start 0',
      'end 0',
      'start 1',
      'end 1',
      'start 2',
      'end 2',
      'start 3',
      'end 3',
    ]);
    expect(out.results.map((r) => r.content)).toEqual(['unsafe 0', 'unsafe 1', 'unsafe 2', 'unsafe 3']);
  });

  it('an unsafe call splits the safe ones around it into separate parallel groups', async () => {
    const { m, tool } = meter();
    const uses = [
      use('a', 'safe', { n: 0 }),
      use('b', 'safe', { n: 1 }),
      use('c', 'unsafe', { n: 2 }),
      use('d', 'safe', { n: 3 }),
      use('e', 'safe', { n: 4 }),
    ];
    const out = await runToolBatch(
      batch([tool('safe', true), tool('unsafe', false)], uses),
      observed().observer,
    );
    expect(m.events).toEqual([
      'start 0',
      'start 1',
      'end 0',
      'end 1',
      'start 2',
      'end 2',
      'start 3',
      'start 4',
      'end 3',
      'end 4',
    ]);
    expect(out.results.map((r) => r.tool_use_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  it('results keep the requested order even when a later call finishes first', async () => {
    let releaseFirst!: () => void;
    const firstMayEnd = new Promise<void>((r) => {
      releaseFirst = r;
    });
    const slowFirst: Tool<{ text: string }> = {
      ...echoTool,
      name: 'slowFirst',
      async call() {
        await firstMayEnd;
        return { content: 'first' };
      },
    };
    const second: Tool<{ text: string }> = {
      ...echoTool,
      name: 'second',
      async call() {
        releaseFirst();
        return { content: 'second' };
      },
    };
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([slowFirst, second], [use('1', 'slowFirst', { text: '' }), use('2', 'second', { text: '' })]),
      observer,
    );
    expect(o.finished.map((r) => r.toolUseId)).toEqual(['2', '1']);
    expect(out.results.map((r) => r.content)).toEqual(['first', 'second']);
  });

  it('a concurrency check that throws counts as unsafe', async () => {
    const { m, tool } = meter();
    const shaky = {
      ...tool('shaky', true),
      isConcurrencySafe: () => {
        throw new Error('cannot tell');
      },
    };
    await runToolBatch(
      batch([shaky], [use('a', 'shaky', { n: 0 }), use('b', 'shaky', { n: 1 })]),
      observed().observer,
    );
    expect(m.max).toBe(1);
  });

  it('every call about to run is announced once, before any of them runs (write-ahead)', async () => {
    const calls: string[] = [];
    const logged: string[] = [];
    const t: Tool<{ text: string }> = {
      ...echoTool,
      async call({ text }) {
        calls.push(`${text} saw ${logged.length} announced`);
        return { content: text };
      },
    };
    const { o, observer } = observed();
    await runToolBatch(
      batch([t], [use('a', 'echo', { text: 'a' }), use('x', 'nope', {}), use('b', 'echo', { text: 'b' })]),
      {
        ...observer,
        beforeRun: async (started) => {
          for (const s of started) logged.push(s.toolUseId);
          await observer.beforeRun(started);
        },
      },
    );
    expect(o.started).toHaveLength(1);
    expect(o.started[0]).toEqual([
      { index: 0, toolUseId: 'a', name: 'echo', input: { text: 'a' }, readOnly: true },
      { index: 2, toolUseId: 'b', name: 'echo', input: { text: 'b' }, readOnly: true },
    ]);
    expect(calls).toEqual(['a saw 2 announced', 'b saw 2 announced']);
  });
});

describe('runToolBatch: permissions', () => {
  const req = (p: PermissionRequest) => `${p.tool.name}:${JSON.stringify(p.input)}`;

  it('deny: is_error result, the tool does not run, the denial is reported', async () => {
    let ran = false;
    const t = {
      ...echoTool,
      call: async () => {
        ran = true;
        return { content: 'x' };
      },
    };
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([t], [use('a', 'echo', { text: 'rm -rf' })], {
        canUseTool: () => ({ behavior: 'deny', message: 'not in this repo', by: 'rule:deny' }),
      }),
      observer,
    );
    expect(ran).toBe(false);
    expect(out.results).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'a',
        content: 'Permission to use echo was denied: not in this repo',
        is_error: true,
      },
    ]);
    expect(o.permissions).toEqual([
      {
        toolUseId: 'a',
        name: 'echo',
        decision: 'deny',
        resolved: 'deny',
        by: 'rule:deny',
        message: 'not in this repo',
      },
    ]);
    expect(o.finished[0]!.outcome).toBe('denied');
    expect(o.started).toEqual([]);
  });

  it('allow with updatedInput: the tool gets the updated input', async () => {
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'original' })], {
        canUseTool: () => ({ behavior: 'allow', updatedInput: { text: 'rewritten' } }),
      }),
      observed().observer,
    );
    expect(out.results[0]!.content).toBe('echo: rewritten');
  });

  it('an updatedInput that fails the tool schema is invalid_input, and the tool never runs', async () => {
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'original' }), use('b', 'echo', { text: 'ok' })], {
        canUseTool: (p) =>
          p.toolUseId === 'a' ? { behavior: 'allow', updatedInput: { text: 42 } } : { behavior: 'allow' },
      }),
      observer,
    );
    expect(o.finished.map((f) => f.outcome)).toEqual(['invalid_input', 'ok']);
    expect(out.results[0]).toMatchObject({ is_error: true });
    expect(out.results[0]!.content).toMatch(
      /from the permission decision \(canUseTool\)'s updatedInput: text:/,
    );
    expect(o.started.flat().map((s) => s.toolUseId)).toEqual(['b']);
  });

  it("a PreToolUse hook's invalid updatedInput is refused the same way", async () => {
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'x' })], {
        hooks: { preToolUse: async () => ({ decision: 'allow', updatedInput: { nope: true } }) },
      }),
      observer,
    );
    expect(o.finished[0]!.outcome).toBe('invalid_input');
    expect(out.results[0]!.content).toMatch(/from the PreToolUse hook's updatedInput/);
    expect(o.started).toEqual([]);
  });

  it('ask with askUser: the user is asked and the answer decides', async () => {
    const asked: string[] = [];
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'yes' }), use('b', 'echo', { text: 'no' })], {
        canUseTool: () => ({ behavior: 'ask', message: 'run echo?' }),
        askUser: async (p, message) => {
          asked.push(`${req(p)} ${message}`);
          return (p.input as { text: string }).text === 'yes';
        },
      }),
      observer,
    );
    expect(asked).toEqual(['echo:{"text":"yes"} run echo?', 'echo:{"text":"no"} run echo?']);
    expect(out.results.map((r) => [r.content, r.is_error ?? false])).toEqual([
      ['echo: yes', false],
      ['Permission to use echo was denied: run echo?', true],
    ]);
    expect(o.permissions.map((p) => [p.decision, p.resolved, p.by])).toEqual([
      ['ask', 'allow', 'user'],
      ['ask', 'deny', 'user'],
    ]);
  });

  it('ask without askUser (non-interactive): denied, and the denial is reported', async () => {
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'x' })], { canUseTool: () => ({ behavior: 'ask' }) }),
      observer,
    );
    expect(out.results[0]).toMatchObject({ is_error: true });
    expect(out.results[0]!.content).toMatch(
      /needs approval, and this run cannot ask anyone \(non-interactive\)/,
    );
    expect(o.permissions).toEqual([
      expect.objectContaining({ decision: 'ask', resolved: 'deny', by: 'noninteractive' }),
    ]);
  });

  it('PreToolUse hook deny: is_error, the policy is not even asked', async () => {
    let policyAsked = false;
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'x' })], {
        canUseTool: () => {
          policyAsked = true;
          return { behavior: 'allow' };
        },
        hooks: { preToolUse: async () => ({ decision: 'deny', reason: 'blocked by hook' }) },
      }),
      observer,
    );
    expect(policyAsked).toBe(false);
    expect(out.results[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'a',
      content: 'Denied by PreToolUse hook: blocked by hook',
      is_error: true,
    });
    expect(o.hooks).toEqual([
      expect.objectContaining({
        hook: 'PreToolUse',
        decision: 'deny',
        reason: 'blocked by hook',
        toolUseId: 'a',
      }),
    ]);
  });

  it('PreToolUse hook updatedInput: the tool runs with it; continue still asks the policy', async () => {
    const seen: unknown[] = [];
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'x' })], {
        canUseTool: (p) => {
          seen.push(p.input);
          return { behavior: 'allow' };
        },
        hooks: { preToolUse: async () => ({ decision: 'continue', updatedInput: { text: 'from hook' } }) },
      }),
      observed().observer,
    );
    expect(seen).toEqual([{ text: 'from hook' }]);
    expect(out.results[0]!.content).toBe('echo: from hook');
  });

  it('PreToolUse hook allow skips the policy', async () => {
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'x' })], {
        canUseTool: () => ({ behavior: 'deny', message: 'no' }),
        hooks: { preToolUse: async () => ({ decision: 'allow' }) },
      }),
      observer,
    );
    expect(out.results[0]!.content).toBe('echo: x');
    expect(o.permissions).toEqual([expect.objectContaining({ resolved: 'allow', by: 'hook:PreToolUse' })]);
  });

  it('a PreToolUse hook that throws is reported and ignored', async () => {
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool], [use('a', 'echo', { text: 'x' })], {
        hooks: {
          preToolUse: async () => {
            throw new Error('hook crashed');
          },
        },
      }),
      observer,
    );
    expect(out.results[0]!.content).toBe('echo: x');
    expect(o.hooks).toEqual([
      expect.objectContaining({ hook: 'PreToolUse', decision: 'error', reason: 'hook crashed' }),
    ]);
  });

  it('PostToolUse additionalContext is appended to the result', async () => {
    const blocks: Tool<{ text: string }> = {
      ...echoTool,
      name: 'blocks',
      async call() {
        return { content: [{ type: 'text', text: 'block result' }] };
      },
    };
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([echoTool, blocks], [use('a', 'echo', { text: 'x' }), use('b', 'blocks', { text: '' })], {
        hooks: { postToolUse: async (p) => ({ additionalContext: `note for ${p.toolUseId}` }) },
      }),
      observer,
    );
    expect(out.results.map((r) => r.content)).toEqual([
      'echo: x\n\nnote for a',
      [
        { type: 'text', text: 'block result' },
        { type: 'text', text: 'note for b' },
      ],
    ]);
    expect(o.hooks.map((h) => [h.hook, h.decision, h.toolUseId])).toEqual([
      ['PostToolUse', 'continue', 'a'],
      ['PostToolUse', 'continue', 'b'],
    ]);
  });
});

describe('runToolBatch: failures and abort', () => {
  it('invalid input, unknown tool, a throw and a timeout are is_error results; the batch goes on', async () => {
    const thrower: Tool<{ text: string }> = {
      ...echoTool,
      name: 'thrower',
      async call() {
        throw new Error('boom');
      },
    };
    const hang: Tool<{ text: string }> = {
      ...echoTool,
      name: 'hang',
      timeoutMs: 20,
      call: () => new Promise(() => {}),
    };
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch(
        [echoTool, thrower, hang],
        [
          use('1', 'echo', { text: 7 }),
          use('2', 'ghost', {}),
          use('3', 'thrower', { text: '' }),
          use('4', 'hang', { text: '' }),
          use('5', 'echo', { text: 'fine' }),
        ],
      ),
      observer,
    );
    expect(out.results.map((r) => r.is_error ?? false)).toEqual([true, true, true, true, false]);
    expect(out.results[2]!.content).toBe('thrower failed: boom');
    expect(out.results[3]!.content).toBe('hang timed out after 20 ms');
    expect(out.results[4]!.content).toBe('echo: fine');
    const byId = Object.fromEntries(o.finished.map((r) => [r.toolUseId, r.outcome]));
    expect(byId).toEqual({
      '1': 'invalid_input',
      '2': 'unknown_tool',
      '3': 'error',
      '4': 'timeout',
      '5': 'ok',
    });
  });

  it('a batch started after the abort runs nothing and answers every call', async () => {
    const controller = new AbortController();
    controller.abort();
    let ran = false;
    const t = {
      ...echoTool,
      call: async () => {
        ran = true;
        return { content: 'x' };
      },
    };
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch([t], [use('a', 'echo', { text: 'x' }), use('b', 'echo', { text: 'y' })], {
        signal: controller.signal,
      }),
      observer,
    );
    expect(ran).toBe(false);
    expect(out.aborted).toBe(true);
    expect(o.started).toEqual([]);
    expect(out.results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ['a', true],
      ['b', true],
    ]);
    expect(o.finished.every((r) => r.outcome === 'interrupted' && r.synthetic)).toBe(true);
  });
});

describe('runToolBatch: one timer and one abort listener per batch', () => {
  const hang = (name: string, timeoutMs: number, safe: boolean): Tool<{ text: string }> => ({
    ...echoTool,
    name,
    timeoutMs,
    isConcurrencySafe: () => safe,
    call: () => new Promise(() => {}),
  });

  it('calls run one after another arm the timer once and listen on the run once', async () => {
    const controller = new AbortController();
    const listen = vi.spyOn(controller.signal, 'addEventListener');
    const timers = vi.spyOn(globalThis, 'setTimeout');
    const unsafe = { ...echoTool, isConcurrencySafe: () => false };
    try {
      const out = await runToolBatch(
        batch(
          [unsafe],
          [1, 2, 3, 4, 5].map((n) => use(`u${n}`, 'echo', { text: `${n}` })),
          {
            signal: controller.signal,
          },
        ),
        observed().observer,
      );
      expect(out.results.map((r) => r.content)).toEqual([
        'echo: 1',
        'echo: 2',
        'echo: 3',
        'echo: 4',
        'echo: 5',
      ]);
      expect(listen).toHaveBeenCalledTimes(1);
      expect(timers).toHaveBeenCalledTimes(1);
    } finally {
      listen.mockRestore();
      timers.mockRestore();
    }
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('each call still times out at its own deadline, in parallel and one after another', async () => {
    const { o, observer } = observed();
    const out = await runToolBatch(
      batch(
        [hang('slow', 60, true), hang('quick', 10, true), hang('alone', 20, false), echoTool],
        [
          use('a', 'slow', { text: '' }),
          use('b', 'quick', { text: '' }),
          use('c', 'echo', { text: 'x' }),
          use('d', 'alone', { text: '' }),
          use('e', 'quick', { text: '' }),
        ],
      ),
      observer,
    );
    expect(out.results.map((r) => r.content)).toEqual([
      'slow timed out after 60 ms',
      'quick timed out after 10 ms',
      'echo: x',
      'alone timed out after 20 ms',
      'quick timed out after 10 ms',
    ]);
    expect(o.finished.map((r) => r.outcome).sort()).toEqual([
      'ok',
      'timeout',
      'timeout',
      'timeout',
      'timeout',
    ]);
  });

  it('the run aborting interrupts every call in flight of the batch', async () => {
    const controller = new AbortController();
    const { o, observer } = observed();
    const pending = runToolBatch(
      batch([hang('h', 60_000, true)], [use('a', 'h', { text: '' }), use('b', 'h', { text: '' })], {
        signal: controller.signal,
      }),
      { ...observer, beforeRun: async () => void setImmediate(() => controller.abort(new Error('stop'))) },
    );
    const out = await pending;
    expect(out.aborted).toBe(true);
    expect(o.finished.map((r) => r.outcome)).toEqual(['interrupted', 'interrupted']);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});

describe("runToolBatch: the tool's signal", () => {
  /** A tool that hands its context out, then waits `waitMs` (ignoring its signal) before answering. */
  function spy(waitMs: number, timeoutMs?: number) {
    const seen: ToolContext[] = [];
    const tool: Tool<{ text: string }> = {
      ...echoTool,
      name: 'spy',
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      async call(_input, ctx) {
        seen.push(ctx);
        await sleep(waitMs);
        return { content: 'late' };
      },
    };
    return { tool, seen };
  }

  it("aborts with the run's reason when the run aborts, whether read before or after", async () => {
    const { tool, seen } = spy(30);
    const run = new AbortController();
    const reason = new Error('user pressed stop');
    const early: AbortSignal[] = [];
    const reader: Tool<{ text: string }> = {
      ...echoTool,
      name: 'reader',
      call: async (_input, ctx) => {
        early.push(ctx.signal);
        await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
        return { content: 'stopped' };
      },
    };
    const { observer } = observed();
    const out = runToolBatch(
      batch([tool, reader], [use('a', 'spy', { text: '' }), use('b', 'reader', { text: '' })], {
        signal: run.signal,
      }),
      observer,
    );
    await sleep(5);
    expect(early[0]!.aborted).toBe(false);
    run.abort(reason);
    const res = await out;
    expect(res.reports.map((r) => r.outcome)).toEqual(['interrupted', 'interrupted']);
    expect(early[0]!.reason).toBe(reason);
    // The spy never looked at its signal while the call ran: looked at now, it is already aborted.
    const late = seen[0]!.signal;
    expect(late.aborted).toBe(true);
    expect(late.reason).toBe(reason);
    expect(seen[0]!.signal).toBe(late);
  });

  it('aborts with Error("timeout") at the call\'s timeout, whether read before or after', async () => {
    const { tool, seen } = spy(40, 10);
    const { observer } = observed();
    const res = await runToolBatch(batch([tool], [use('a', 'spy', { text: '' })]), observer);
    expect(res.reports[0]!.outcome).toBe('timeout');
    expect(seen[0]!.signal.aborted).toBe(true);
    expect((seen[0]!.signal.reason as Error).message).toBe('timeout');
    expect(Object.keys(seen[0]!)).toEqual(['signal', 'cwd', 'toolUseId', 'session', 'run']);
    expect({ ...seen[0]! }.signal).toBe(seen[0]!.signal);
  });

  it('is not aborted when the call ends normally', async () => {
    const { tool, seen } = spy(1, 1_000);
    const { observer } = observed();
    const res = await runToolBatch(batch([tool], [use('a', 'spy', { text: '' })]), observer);
    expect(res.reports[0]!.outcome).toBe('ok');
    await sleep(5);
    expect(seen[0]!.signal.aborted).toBe(false);
  });

  it("leaves no listener on the run's signal, however many calls ran and however they ended", async () => {
    const run = new AbortController();
    const thrower: Tool<{ text: string }> = {
      ...echoTool,
      name: 'thrower',
      call: async () => {
        throw new Error('boom');
      },
    };
    const hang: Tool<{ text: string }> = {
      ...echoTool,
      name: 'hang',
      timeoutMs: 1,
      call: () => new Promise(() => {}),
    };
    const { observer } = observed();
    for (let i = 0; i < 30; i++) {
      await runToolBatch(
        batch(
          [echoTool, thrower, hang],
          [
            use(`e${i}`, 'echo', { text: 'x' }),
            use(`t${i}`, 'thrower', { text: '' }),
            use(`h${i}`, 'hang', { text: '' }),
          ],
          { signal: run.signal },
        ),
        observer,
      );
    }
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });
});

describe('permissions through a session', () => {
  it('deny and non-interactive ask are recorded in session.state.denials; the loop goes on', async () => {
    const h = await scriptedSession(
      [
        {
          content: [
            { type: 'tool_use', id: 'd', name: 'echo', input: { text: 'deny me' } },
            { type: 'tool_use', id: 'q', name: 'echo', input: { text: 'ask me' } },
            { type: 'tool_use', id: 'ok', name: 'echo', input: { text: 'fine' } },
          ],
          stop_reason: 'tool_use',
        },
        textTurn('done'),
      ],
      {
        canUseTool: (p) => {
          const text = (p.input as { text: string }).text;
          if (text === 'deny me') return { behavior: 'deny', message: 'nope', by: 'rule:test' };
          if (text === 'ask me') return { behavior: 'ask', message: 'sure?' };
          return { behavior: 'allow' };
        },
        // The pre-approvals behaviour: an ask nobody can answer is denied (the default parks).
        unattendedAsk: 'deny',
      },
    );
    const res = await h.session.submit('go');
    expect(res.status).toBe('completed');
    expect(h.historyProblems()).toEqual([]);
    expect(
      h.session.state.denials.toArray().map((d) => ({ id: d.toolUseId, by: d.by, message: d.message })),
    ).toEqual([
      { id: 'd', by: 'rule:test', message: 'nope' },
      { id: 'q', by: 'noninteractive', message: 'sure?' },
    ]);
    const decided = (await h.records()).filter((r) => r.type === 'permission.decided');
    expect(decided).toHaveLength(3);
  });

  it('ask answered by askUser through a session: allowed, nothing recorded as a denial', async () => {
    const prompts: (string | undefined)[] = [];
    const h = await scriptedSession(
      [
        {
          content: [{ type: 'tool_use', id: 'q', name: 'echo', input: { text: 'ask me' } }],
          stop_reason: 'tool_use',
        },
        textTurn('done'),
      ],
      {
        canUseTool: () => ({ behavior: 'ask', message: 'allow echo?' }),
        askUser: async (_p, message) => {
          prompts.push(message);
          return true;
        },
      },
    );
    const res = await h.session.submit('go');
    expect(res.status).toBe('completed');
    expect(prompts).toEqual(['allow echo?']);
    expect(h.session.state.denials.length).toBe(0);
    expect(h.session.state.messages.at(2)!.content).toEqual([
      { type: 'tool_result', tool_use_id: 'q', content: 'echo: ask me' },
    ]);
  });
});
