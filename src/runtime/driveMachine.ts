import { createActor } from 'xstate';
import type { MessageEmitted, RunContext, RunInput } from '../machines/context.ts';
import type { QueryLoopMachine } from '../machines/queryLoop.machine.ts';

export interface TransitionFact {
  from: string;
  to: string;
  trigger: string;
  reason: string;
}

export interface MachineObserver {
  onTransition(t: TransitionFact): void;
  onMessage(e: MessageEmitted): void;
}

export interface DriveOutcome {
  final: 'completed' | 'failed' | 'aborted';
  reason: string;
  context: RunContext;
  error: string | null;
}

interface InspectedTransition {
  source: { key: string };
  target?: readonly { key: string }[];
  meta?: { reason?: string };
}

/**
 * Runs one run of the chart to a final state and reports each transition taken. Reasons
 * are read from `@xstate.microstep` inspection, the only event that names the edge taken
 * (with its `meta`). Used by the live runtime and by verify-replay alike.
 */
export function driveMachine(
  machine: QueryLoopMachine,
  input: RunInput,
  observer: MachineObserver,
): Promise<DriveOutcome> {
  return new Promise<DriveOutcome>((resolve) => {
    let lastReason = 'runtime_error';
    const actor = createActor(machine, {
      id: 'queryLoop',
      input,
      inspect: (ev) => {
        if (ev.type !== '@xstate.microstep' || ev.actorRef !== actor) return;
        const taken = (ev as unknown as { _transitions: InspectedTransition[] })._transitions;
        for (const t of taken) {
          const reason = t.meta?.reason ?? '(none)';
          lastReason = reason;
          observer.onTransition({
            from: t.source.key,
            to: t.target?.[0]?.key ?? t.source.key,
            trigger: ev.event.type,
            reason,
          });
        }
      },
    });
    actor.on('message', (e) => observer.onMessage(e));
    actor.subscribe({
      complete: () => {
        const snap = actor.getSnapshot();
        resolve({
          final: snap.value as DriveOutcome['final'],
          reason: lastReason,
          context: snap.context,
          error: snap.context.error,
        });
      },
      error: (err) => {
        const snap = actor.getSnapshot();
        resolve({
          final: 'failed',
          reason: 'runtime_error',
          context: snap.context,
          error: err instanceof Error ? err.message : String(err),
        });
      },
    });
    actor.start();
  });
}
