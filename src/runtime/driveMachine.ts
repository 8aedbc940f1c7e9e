import { createActor } from 'xstate';
import { messageOf } from '../lib/errors.ts';
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
  final: 'completed' | 'failed' | 'aborted' | 'awaitingApproval';
  reason: string;
  context: RunContext;
  error: string | null;
}

/**
 * Runs one run of the chart to a final state and reports each transition taken. The chart
 * reports its own edges (`edge` events, see machines/edgeReport.ts), each before the messages
 * its actions append. Used by the live runtime and by verify-replay alike.
 */
export function driveMachine(
  machine: QueryLoopMachine,
  input: RunInput,
  observer: MachineObserver,
): Promise<DriveOutcome> {
  return new Promise<DriveOutcome>((resolve) => {
    let lastReason = 'runtime_error';
    const actor = createActor(machine, { id: 'queryLoop', input });
    actor.on('edge', (e) => {
      lastReason = e.reason;
      observer.onTransition({ from: e.from, to: e.to, trigger: e.trigger, reason: e.reason });
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
          error: messageOf(err),
        });
      },
    });
    actor.start();
  });
}
