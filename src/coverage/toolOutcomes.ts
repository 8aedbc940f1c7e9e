import { type LogRecord, RecordDataSchemas } from '../store/records.ts';

/**
 * What became of each tool's calls in a set of logs. Reason coverage cannot tell an allowed call
 * from a denied one or a schema refusal (all continue the loop with `tool_result_continuation`);
 * the outcome of the `tool.finished` record can. `parked` is not an outcome of its own there: a
 * call the policy asked about with nobody to answer parks the run (`approval.requested`) and
 * finishes only in a later run, so a parked call that was approved since counts once as `parked`
 * and once as what it finished with.
 */

/** Every outcome a `tool.finished` record may carry, in the schema's order, then `parked`. */
export const TOOL_OUTCOMES = [...RecordDataSchemas['tool.finished'].shape.outcome.options, 'parked'] as const;
export type ToolOutcomeName = (typeof TOOL_OUTCOMES)[number];

/** Calls of one tool per outcome; every outcome is present (0 when none was seen). */
export type ToolOutcomeCounts = Record<ToolOutcomeName, number>;

function zeroCounts(): ToolOutcomeCounts {
  return Object.fromEntries(TOOL_OUTCOMES.map((o) => [o, 0])) as ToolOutcomeCounts;
}

export class ToolOutcomeCounter {
  private readonly byTool = new Map<string, ToolOutcomeCounts>();

  add(record: LogRecord): void {
    if (record.type === 'tool.finished') this.count(record.data.name, record.data.outcome);
    else if (record.type === 'approval.requested') this.count(record.data.tool, 'parked');
  }

  private count(tool: string, outcome: ToolOutcomeName): void {
    let counts = this.byTool.get(tool);
    if (!counts) {
      counts = zeroCounts();
      this.byTool.set(tool, counts);
    }
    counts[outcome]++;
  }

  /** Tools by name (sorted, so two runs over the same logs print the same thing). */
  report(): Record<string, ToolOutcomeCounts> {
    const names = [...this.byTool.keys()].sort();
    return Object.fromEntries(names.map((n) => [n, { ...this.byTool.get(n)! }]));
  }
}

/** The `--tools` table: one row per tool, one column per outcome. */
export function formatToolOutcomes(tools: Record<string, ToolOutcomeCounts>): string[] {
  const names = Object.keys(tools);
  if (names.length === 0) return ['no tool calls'];
  const first = Math.max('tool'.length, ...names.map((n) => n.length));
  const widths = TOOL_OUTCOMES.map((o) =>
    Math.max(o.length, ...names.map((n) => String(tools[n]![o]).length)),
  );
  const row = (name: string, cells: readonly string[]) =>
    [name.padEnd(first), ...cells.map((c, i) => c.padStart(widths[i]!))].join('  ').trimEnd();
  return [
    row('tool', TOOL_OUTCOMES),
    ...names.map((n) =>
      row(
        n,
        TOOL_OUTCOMES.map((o) => String(tools[n]![o])),
      ),
    ),
  ];
}
