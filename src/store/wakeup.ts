/**
 * A level-triggered wake-up for followers: `poke` (from an append, a file-watch event) wakes
 * the waiter, or — when nobody waits — makes the next `wait` return at once. A follower that
 * reads, then waits, cannot miss a change that landed while it was reading.
 */
export class Wakeup {
  private pending = false;
  private waiter: (() => void) | undefined;

  poke(): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w();
    } else {
      this.pending = true;
    }
  }

  /** Resolves on the next poke (or at once if one came since the last wait), or when the signal aborts. */
  wait(signal: AbortSignal): Promise<void> {
    if (this.pending || signal.aborted) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        this.waiter = undefined;
        resolve();
      };
      this.waiter = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
