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
