/**
 * One turn numbering for the whole project (CLI, viewer, folds): turns of a run count from 1;
 * the edges below begin the next turn — they are the ones the chart takes with its `nextTurn`
 * or `countPausedTurn` action — and a transition belongs to the turn it was taken in, so the
 * edge that leaves a turn still counts in it. The run's `turns` (and `RunResult.turns`) is the
 * turn it ended in. Kept in the store, which folds logs and knows no chart; a test checks it
 * against the chart's own count.
 */
export const NEW_TURN_REASONS: ReadonlySet<string> = new Set([
  'tool_result_continuation',
  'auto_compact',
  'pause_turn_continuation',
]);

/** The turn of the records that follow a transition taken in `turn` for `reason`. */
export function turnAfter(turn: number, reason: string): number {
  return NEW_TURN_REASONS.has(reason) ? turn + 1 : turn;
}
