import { EFFECT_NAMES } from '../machines/effects.ts';
import { parseScript } from '../model/script.ts';
import type { ChartEdge } from '../viz/edgeCatalog.ts';
import { completion, type EdgePath, type PathOptions } from './paths.ts';
import type { ActorId, Driver, FactVariant, ScriptEntry, TestToolName } from './traversal.ts';

/**
 * A path turned into something the real runtime can run: the scripted model's turns in
 * request order, and per invoked actor the driver of each of its invocations. A run of the
 * chart invokes an actor once per state entry and gets one done / error event back, so the
 * k-th step of an actor in the path is its k-th invocation in the run.
 */
export interface Scenario {
  /** The edge this scenario exists for (its path ends by taking it). */
  target: ChartEdge;
  /** Steps of the path to the target, then the shortest way on to a final state. */
  steps: FactVariant[];
  /** Index in `steps` / `expected` of the step that takes the target edge. */
  targetIndex: number;
  /** The transitions the run must log, in order. */
  expected: ChartEdge[];
  /** The reason `run.ended` must carry. */
  finalReason: string;
  script: ScriptEntry[];
  schedule: Record<ActorId, Driver[]>;
}

export class NoDriverError extends Error {
  readonly code = 'NO_DRIVER';
  constructor(
    readonly edge: ChartEdge,
    readonly variant: string,
  ) {
    super(
      `edge ${edge.id} (${edge.reason}) cannot be driven: fact variant ${variant} has no driver ` +
        '(add one in src/coverage/factVariants.ts)',
    );
    this.name = 'NoDriverError';
  }
}

/** A tool_use turn calling the test tool the next runTools step needs. */
function toolUseTurn(next: FactVariant | undefined, n: number): ScriptEntry {
  const tool: TestToolName = next?.driver?.kind === 'tool' ? next.driver.tool : 'echo';
  return {
    content: [{ type: 'tool_use', id: `toolu_${n}`, name: tool, input: { text: `call ${n}` } }],
    stop_reason: 'tool_use',
  };
}

export function buildScenario(path: EdgePath, opts: Omit<PathOptions, 'maxDepth'> = {}): Scenario {
  const rest = completion(path, opts);
  const steps = [...path.steps, ...rest.steps];
  const schedule = Object.fromEntries(EFFECT_NAMES.map((a) => [a, [] as Driver[]])) as Record<
    ActorId,
    Driver[]
  >;
  const script: ScriptEntry[] = [];
  for (const [i, step] of steps.entries()) {
    if (!step.driver) throw new NoDriverError(path.edge, step.id);
    schedule[step.actor].push(step.driver);
    if (step.driver.kind !== 'modelTurn') continue;
    const entry = step.driver.turn === 'toolUse' ? toolUseTurn(steps[i + 1], i + 1) : step.driver.turn;
    // Tagging each entry with the request it answers makes a misaligned script fail loudly.
    script.push({ ...entry, for: step.actor === 'compact' ? 'compaction' : 'turn' });
  }
  parseScript({ turns: script });
  const expected = [...path.edges, ...rest.edges];
  return {
    target: path.edge,
    steps,
    targetIndex: path.steps.length - 1,
    expected,
    finalReason: expected.at(-1)?.reason ?? '',
    script,
    schedule,
  };
}

/** How a scenario is named in test output and reports. */
export function scenarioName(s: Pick<Scenario, 'target'>): string {
  return `${s.target.id} (${s.target.reason})`;
}
