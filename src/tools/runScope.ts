import { messageOf } from '../lib/errors.ts';
import type { RunScope } from './types.ts';

/**
 * The scope of one run (see RunScope): its resources, made on first use, and the cleanups that
 * `end()` runs once, newest first. A cleanup that fails does not stop the others; what failed
 * is returned so the caller can say so.
 */
export class RunResources implements RunScope {
  private readonly resources = new Map<symbol, unknown>();
  private readonly cleanups: (() => Promise<void> | void)[] = [];
  private ended = false;

  constructor(
    readonly runId: string,
    readonly signal: AbortSignal,
  ) {}

  resource<T>(key: symbol, make: (scope: RunScope) => T): T {
    if (!this.resources.has(key)) this.resources.set(key, make(this));
    return this.resources.get(key) as T;
  }

  onEnd(cleanup: () => Promise<void> | void): void {
    // Registered after the end (a call that outlived its run): cleaned up at once.
    if (this.ended)
      void Promise.resolve()
        .then(cleanup)
        .catch(() => {});
    else this.cleanups.push(cleanup);
  }

  async end(): Promise<string[]> {
    if (this.ended) return [];
    this.ended = true;
    const failures: string[] = [];
    for (const cleanup of this.cleanups.reverse()) {
      try {
        await cleanup();
      } catch (e) {
        failures.push(messageOf(e));
      }
    }
    this.cleanups.length = 0;
    return failures;
  }
}
