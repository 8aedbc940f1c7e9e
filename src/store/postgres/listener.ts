import pg from 'pg';

/** One follower's view of a channel: the highest value notified for its key, and a wake-up. */
export interface Subscription {
  /** Highest seq notified for the key since subscribing (0: none). */
  readonly notified: number;
  /** Resolves once `notified` passes `seq`, the signal aborts or the listener closes. */
  wait(seq: number, signal: AbortSignal): Promise<void>;
  readonly closed: boolean;
  close(): void;
}

interface Sub {
  key: string;
  notified: number;
  closed: boolean;
  wake: (() => void) | null;
}

/**
 * One LISTEN connection per store, shared by every follower: a notification `<n>:<key>` wakes
 * the followers of `key`. Subscribing waits until LISTEN is in place, so a follower that reads
 * after subscribing never misses an append made after its read.
 */
export class ChannelListener {
  private client: pg.Client | null = null;
  private ready: Promise<void> | null = null;
  private readonly subs = new Set<Sub>();
  private failure: Error | null = null;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
  ) {}

  async subscribe(key: string): Promise<Subscription> {
    if (!this.closed) await this.connect();
    // Closed meanwhile (or before): a subscription that is over already.
    const sub: Sub = { key, notified: 0, closed: this.closed, wake: null };
    if (!sub.closed) this.subs.add(sub);
    const subs = this.subs;
    return {
      get notified() {
        return sub.notified;
      },
      get closed() {
        return sub.closed;
      },
      wait: (seq, signal) =>
        new Promise<void>((resolve) => {
          if (sub.notified > seq || sub.closed || signal.aborted) return resolve();
          const done = () => {
            signal.removeEventListener('abort', done);
            sub.wake = null;
            resolve();
          };
          sub.wake = () => {
            if (sub.notified > seq || sub.closed) done();
          };
          signal.addEventListener('abort', done, { once: true });
        }),
      close: () => {
        sub.closed = true;
        subs.delete(sub);
        sub.wake?.();
      },
    };
  }

  /** Why the connection was lost, if it was: followers end with this error. */
  get error(): Error | null {
    return this.failure;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.subs) {
      s.closed = true;
      s.wake?.();
    }
    this.subs.clear();
    const client = this.client;
    this.client = null;
    this.ready = null;
    await client?.end().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.ready ??= (async () => {
      const client = new pg.Client(this.config);
      client.on('notification', (n) => this.onNotification(n.payload ?? ''));
      client.on('error', (e) => this.lost(e));
      await client.connect();
      if (this.closed) {
        await client.end().catch(() => undefined);
        return;
      }
      await client.query(`LISTEN ${this.channel}`);
      this.client = client;
    })().catch((e: unknown) => {
      this.ready = null;
      throw e;
    });
    return this.ready;
  }

  private onNotification(payload: string): void {
    const colon = payload.indexOf(':');
    const n = Number(payload.slice(0, colon));
    const key = payload.slice(colon + 1);
    for (const s of this.subs) {
      if (s.key !== key || n <= s.notified) continue;
      s.notified = n;
      s.wake?.();
    }
  }

  private lost(e: Error): void {
    this.failure = e;
    this.client = null;
    this.ready = null;
    for (const s of this.subs) {
      s.closed = true;
      s.wake?.();
    }
    this.subs.clear();
  }
}
