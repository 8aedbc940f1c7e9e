import type { PromiseActorLogic } from 'xstate';

const RESOLVE = 'xstate.promise.resolve';
const REJECT = 'xstate.promise.reject';
const STOP = 'xstate.stop';

type Snapshot<O, I> = {
  status: 'active' | 'done' | 'error' | 'stopped';
  output: O | undefined;
  error: unknown;
  input: I | undefined;
};

/**
 * A promise actor for the chart's effects: the same snapshots and the same
 * `xstate.done.actor.*` / `xstate.error.actor.*` events as xstate's `fromPromise`, without the
 * AbortController `fromPromise` makes per invocation (measured here: ~20 µs of the ~65 µs an
 * invoke costs). Our effects never need it: every one of them gets the run's AbortSignal, and
 * a result that arrives after its state was left is dropped by the status check, as in
 * `fromPromise`.
 */
export function effect<O, I>(run: (args: { input: I }) => PromiseLike<O> | O): PromiseActorLogic<O, I> {
  const logic = {
    config: run,
    transition: (state: Snapshot<O, I>, event: { type: string; data?: unknown }) => {
      if (state.status !== 'active') return state;
      switch (event.type) {
        case RESOLVE:
          return { ...state, status: 'done', output: event.data as O, input: undefined };
        case REJECT:
          return { ...state, status: 'error', error: event.data, input: undefined };
        case STOP:
          return { ...state, status: 'stopped', input: undefined };
        default:
          return state;
      }
    },
    start: (
      state: Snapshot<O, I>,
      {
        self,
        system,
      }: {
        self: { getSnapshot(): { status: string } };
        system: {
          _relay: (source: unknown, target: unknown, event: { type: string; data: unknown }) => void;
        };
      },
    ) => {
      if (state.status !== 'active') return;
      let pending: PromiseLike<O>;
      try {
        pending = Promise.resolve(run({ input: state.input as I }));
      } catch (e) {
        pending = Promise.reject(e);
      }
      pending.then(
        (data) => {
          if (self.getSnapshot().status === 'active') system._relay(self, self, { type: RESOLVE, data });
        },
        (data: unknown) => {
          if (self.getSnapshot().status === 'active') system._relay(self, self, { type: REJECT, data });
        },
      );
    },
    getInitialSnapshot: (_: unknown, input: I): Snapshot<O, I> => ({
      status: 'active',
      output: undefined,
      error: undefined,
      input,
    }),
    getPersistedSnapshot: (s: Snapshot<O, I>) => s,
    restoreSnapshot: (s: Snapshot<O, I>) => s,
  };
  return logic as unknown as PromiseActorLogic<O, I>;
}
