import type { RerunDivergence } from './divergence.ts';

/** Replay found the first record where re-driving the machine does something else. */
export class ReplayDivergenceError extends Error {
  readonly code = 'REPLAY_DIVERGENCE';
  constructor(
    readonly seq: number,
    readonly expected: unknown,
    readonly actual: unknown,
    readonly detail: string,
  ) {
    super(`replay diverged at seq ${seq}: ${detail}`);
    this.name = 'ReplayDivergenceError';
  }
}

/**
 * A recorded model (`recordedModel`, `rerun`) was sent a request the recording does not have:
 * the current code asks something else. Carries the same divergence report as a rerun.
 */
export class ReplayMismatchError extends Error {
  readonly code = 'REPLAY_MISMATCH';
  constructor(
    readonly divergence: RerunDivergence,
    readonly diff: string,
  ) {
    super(
      `the request differs from the recorded one at seq ${divergence.seq}${divergence.path ? ` (${divergence.path})` : ''}`,
    );
    this.name = 'ReplayMismatchError';
  }
}
