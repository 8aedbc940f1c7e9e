import { z } from 'zod';
import type { HookJSONOutput, HooksOption, StopHook, StopHookResult } from '../hooks/types.ts';
import type { ActorFailure } from '../machines/context.ts';
import { EFFECT_NAMES, type EffectHandlers } from '../machines/effects.ts';
import { type QueryLoopMachine, queryLoopMachine } from '../machines/queryLoop.machine.ts';
import { parseScript } from '../model/script.ts';
import { ScriptedModelClient } from '../model/scripted.ts';
import { decideApproval } from '../runtime/approvals.ts';
import type { BudgetPolicy } from '../runtime/budget.ts';
import { counterIds, seededRandom, VirtualClock } from '../runtime/determinism.ts';
import { type RunResult, Session, type SessionOptions } from '../runtime/session.ts';
import type { LogRecord } from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import type { AnyTool, CanUseTool, Tool } from '../tools/types.ts';
import { transitionKey } from '../viz/edgeCatalog.ts';
import { type Scenario, scenarioName } from './scenarios.ts';
import {
  type ActorId,
  type PromptHookAnswer,
  type StopAnswer,
  TRAVERSAL_COMPACT_THRESHOLD,
  TRAVERSAL_SETTINGS,
} from './traversal.ts';

/**
 * Runs a scenario on the real runtime: a Session with the scripted model, the test tools,
 * a stop hook and a budget policy that answer as scheduled, a virtual clock and the
 * traversal configuration. The live effects do all the work; a thin wrapper around each one
 * only counts its invocations and, where the scenario says so, aborts the session as it
 * starts or replaces it by a broken one for that invocation.
 */

export interface ScenarioRun {
  sessionId: string;
  result: RunResult;
  /** The session's whole log (a resumed-batch scenario's starts with its set-up run). */
  records: LogRecord[];
  /** What is wrong with the run against the scenario; empty when it took exactly the path. */
  problems: string[];
}

interface Controls {
  abort(): void;
  stopAnswer: StopAnswer;
  /** What the PreCompact hook answers this compaction (null: no objection). */
  preCompact: 'block' | 'stop' | null;
  problems: string[];
}

const input = z.object({ text: z.string() });
const tool = (name: string, call: Tool<{ text: string }>['call']): Tool<{ text: string }> => ({
  name,
  description: `coverage test tool ${name}`,
  inputSchema: input,
  isReadOnly: true,
  isConcurrencySafe: () => true,
  call,
});

function testTools(ctl: Controls): AnyTool[] {
  return [
    tool('echo', async ({ text }) => ({ content: `echo: ${text}` })),
    // Twice the threshold in estimated tokens (4 characters a token): auto-compaction is due.
    tool('bigOutput', async () => ({ content: 'x'.repeat(TRAVERSAL_COMPACT_THRESHOLD * 8) })),
    // The policy asks about this one (approvalPolicy): with nobody attached, the run parks.
    tool('needsApproval', async ({ text }) => ({ content: `approved: ${text}` })),
    // Its PostToolUse hook (coverageHooks) says continue: false.
    tool('stopper', async ({ text }) => ({ content: `stopper: ${text}` })),
    // The user hits Ctrl-C while this tool runs; it stops when the run's signal says so.
    tool('interrupt', async (_input, ctx) => {
      ctl.abort();
      if (!ctx.signal.aborted) await new Promise((res) => ctx.signal.addEventListener('abort', res));
      return { content: 'interrupted', isError: true };
    }),
  ];
}

function stopHook(ctl: Controls): StopHook {
  const answers: Record<StopAnswer, StopHookResult> = {
    allow: { decision: 'allow' },
    block: { decision: 'block', reason: 'The tests still fail: run them again.' },
    prevent: { decision: 'prevent', reason: 'The sandbox was torn down: stop here.' },
    budgetContinue: { decision: 'allow' },
    subagentBlock: { decision: 'allow' },
  };
  return { name: 'coverage-stop-hook', run: async () => answers[ctl.stopAnswer] };
}

const PROMPT_ANSWERS: Record<PromptHookAnswer, HookJSONOutput> = {
  block: { decision: 'block', reason: 'Prompts about production are not allowed here.' },
  stop: { continue: false, stopReason: 'The repository is frozen for a release.' },
  context: {
    hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'Use bun, not npm.' },
  },
};

const PRE_COMPACT_ANSWERS = {
  block: { decision: 'block', reason: 'Keep the whole transcript for the audit.' },
  stop: { continue: false, stopReason: 'Compaction means the task is too big: stop.' },
} as const satisfies Record<string, HookJSONOutput>;

/** Whether the scenario runs as a sub-agent (its stop checks are SubagentStop's). */
const asSubAgent = (s: Scenario) =>
  s.schedule.stopChecks.some((d) => d.kind === 'stopAnswer' && d.answer === 'subagentBlock');

/**
 * The in-process hooks a scenario needs, answering as its drivers say: the `stopper` tool's
 * PostToolUse hook stops the run; UserPromptSubmit, PreCompact and SubagentStop hooks are there
 * only for the scenarios that drive them, so the others' logs stay as they were.
 */
function coverageHooks(s: Scenario, ctl: Controls): HooksOption {
  const hooks: HooksOption = {
    PostToolUse: [
      {
        matcher: 'stopper',
        hooks: [async () => ({ continue: false, stopReason: 'The stopper tool ran: stop here.' })],
      },
    ],
  };
  const prompt = s.schedule.buildQuery.find((d) => d.kind === 'promptHook');
  if (prompt?.kind === 'promptHook') {
    const answer = PROMPT_ANSWERS[prompt.answer];
    hooks.UserPromptSubmit = [{ hooks: [async () => answer] }];
  }
  if (s.schedule.compact.some((d) => d.kind === 'preCompact'))
    hooks.PreCompact = [
      { hooks: [async () => (ctl.preCompact ? PRE_COMPACT_ANSWERS[ctl.preCompact] : undefined)] },
    ];
  if (asSubAgent(s)) {
    const block = { decision: 'block', reason: 'Name the files you changed first.' } as const;
    hooks.SubagentStop = [{ hooks: [async () => (ctl.stopAnswer === 'subagentBlock' ? block : undefined)] }];
  }
  return hooks;
}

const budgetPolicy =
  (ctl: Controls): BudgetPolicy =>
  () =>
    ctl.stopAnswer === 'budgetContinue' ? { message: 'Token budget: keep working on the task.' } : null;

/**
 * Wraps the session's live effects: each one counts its invocations against the schedule and,
 * where the scenario says so, aborts the session as it starts or is replaced by a broken one
 * for that invocation. Every other invocation is the live effect, unchanged.
 */
function driveEffects(s: Scenario, ctl: Controls) {
  return (live: EffectHandlers): EffectHandlers => {
    const wrap = <K extends ActorId>(id: K): EffectHandlers[K] => {
      let used = 0;
      const run = live[id] as (input: unknown) => Promise<unknown>;
      return (async (input: unknown) => {
        const driver = s.schedule[id][used++];
        if (!driver) {
          ctl.problems.push(`${id} was invoked ${used} times; the path plans ${s.schedule[id].length}`);
          throw { kind: 'failed', message: `unplanned ${id} invocation` } satisfies ActorFailure;
        }
        if (driver.kind === 'brokenActor') {
          throw { kind: 'failed', message: `injected fault: ${id} is broken` } satisfies ActorFailure;
        }
        if (driver.kind === 'abortAtStart') ctl.abort();
        if (driver.kind === 'stopAnswer') ctl.stopAnswer = driver.answer;
        if (id === 'compact') ctl.preCompact = driver.kind === 'preCompact' ? driver.answer : null;
        return run(input);
      }) as EffectHandlers[K];
    };
    return Object.fromEntries(EFFECT_NAMES.map((id) => [id, wrap(id)])) as EffectHandlers;
  };
}

export interface RunScenarioOptions {
  store: EventStore;
  /** Prefix of the session / run ids (they must be unique in the store). */
  idPrefix: string;
  machine?: QueryLoopMachine;
}

export async function runScenario(s: Scenario, opts: RunScenarioOptions): Promise<ScenarioRun> {
  let session: Session | undefined;
  const ctl: Controls = {
    abort: () => session?.abort('aborted by the coverage driver'),
    stopAnswer: 'allow',
    preCompact: null,
    problems: [],
  };
  const client = new ScriptedModelClient(parseScript({ turns: s.script }), { requestAbort: ctl.abort });
  const ids = counterIds(opts.idPrefix);
  const common = {
    store: opts.store,
    tools: testTools(ctl),
    canUseTool: approvalPolicy,
    stopHooks: [stopHook(ctl)],
    budgetPolicy: budgetPolicy(ctl),
    settings: TRAVERSAL_SETTINGS,
    clock: new VirtualClock(),
    random: seededRandom(7),
    ids,
    cwd: process.cwd(),
    machine: opts.machine ?? queryLoopMachine,
    hooks: coverageHooks(s, ctl),
    ...(asSubAgent(s) ? { subAgent: { parent: 'coverage-parent', agent: 'coverage-agent' } } : {}),
  } satisfies Partial<SessionOptions>;
  const scenario = { ...common, model: client, interposeEffects: driveEffects(s, ctl) };
  let result: RunResult;
  if (s.schedule.buildQuery[0]?.kind === 'parkedBatch') {
    const parked = await parkedSession(common, scenarioName(s));
    session = await Session.open(parked, scenario);
    result = await session.submit();
  } else if (s.schedule.buildQuery[0]?.kind === 'manualCompact') {
    const talked = await sessionWithHistory(common, scenarioName(s));
    session = await Session.open(talked, scenario);
    result = await session.compact();
  } else {
    session = await Session.create({ ...scenario, title: scenarioName(s) });
    result = await session.submit('Fix the failing test.');
  }
  // The whole log (a parked session's set-up run included: later records refer to it); the
  // scenario's own run is what is compared.
  const records: LogRecord[] = [];
  for await (const r of opts.store.read(session.id)) records.push(r);
  if (client.consumed !== s.script.length) {
    ctl.problems.push(
      `the model was asked ${client.consumed} times; the script has ${s.script.length} turns`,
    );
  }
  const own = records.filter((r) => r.run === null || r.run === result.runId);
  return { sessionId: session.id, result, records, problems: [...ctl.problems, ...compare(s, own)] };
}

/** The `needsApproval` test tool asks; every other call is allowed. */
const approvalPolicy: CanUseTool = (req) =>
  req.tool.name === 'needsApproval'
    ? { behavior: 'ask', message: 'coverage: needs approval', by: 'coverage policy' }
    : { behavior: 'allow', by: 'coverage policy' };

/**
 * A session parked on an approved batch, for a scenario that starts by resuming one: its first
 * run asks for `needsApproval`, nobody is attached, it parks; then the call is approved.
 */
async function parkedSession(common: Omit<SessionOptions, 'model'>, title: string): Promise<string> {
  const setup = new ScriptedModelClient(
    parseScript({
      turns: [
        {
          content: [{ type: 'tool_use', id: 'toolu_0', name: 'needsApproval', input: { text: 'call 0' } }],
          stop_reason: 'tool_use',
          for: 'turn',
        },
      ],
    }),
  );
  const first = await Session.create({ ...common, model: setup, title });
  const parked = await first.submit('Fix the failing test.');
  if (parked.reason !== 'awaiting_approval') throw new Error(`set-up run ended ${parked.reason}, not parked`);
  await decideApproval(common.store, first.id, 'toolu_0', { allow: true, by: 'coverage driver' });
  return first.id;
}

/** A session with one finished run (a prompt and an answer), for a scenario that compacts it. */
async function sessionWithHistory(common: Omit<SessionOptions, 'model'>, title: string): Promise<string> {
  const setup = new ScriptedModelClient(parseScript({ turns: [{ text: 'Looked at it.', for: 'turn' }] }));
  const first = await Session.create({ ...common, model: setup, title });
  const ran = await first.submit('Fix the failing test.');
  if (ran.status !== 'completed') throw new Error(`set-up run ended ${ran.reason}, not completed`);
  return first.id;
}

/** The logged transitions, as catalog keys: of one run when `runId` is given. */
export function loggedTransitions(records: readonly LogRecord[], runId?: string): string[] {
  return records.flatMap((r) =>
    r.type === 'transition' && (runId === undefined || r.run === runId) ? [transitionKey(r.data)] : [],
  );
}

function compare(s: Scenario, records: readonly LogRecord[]): string[] {
  const problems: string[] = [];
  const actual = loggedTransitions(records);
  const expected = s.expected.map((e) => e.key);
  const at = expected.findIndex((k, i) => actual[i] !== k);
  if (at >= 0 || actual.length !== expected.length) {
    const i = at >= 0 ? at : expected.length;
    problems.push(
      `transition ${i + 1}: expected ${expected[i] ?? '(end of run)'}, logged ${actual[i] ?? '(nothing)'}`,
    );
  }
  if (actual[s.targetIndex] !== s.target.key) problems.push(`the target edge ${s.target.id} was not taken`);
  const ended = records.findLast((r) => r.type === 'run.ended');
  const reason = ended?.type === 'run.ended' ? ended.data.reason : '(no run.ended)';
  if (reason !== s.finalReason) problems.push(`the run ended ${reason}, expected ${s.finalReason}`);
  return problems;
}
