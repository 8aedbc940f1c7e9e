import type { ModelStreamEvent } from '../model/types.ts';
import type { LogRecord } from '../store/records.ts';
import type { SessionState } from '../store/sessionState.ts';
import { NEW_TURN_REASONS } from '../store/turns.ts';
import { describeRecord } from './format.ts';

/**
 * What a person watching a run sees: one line per transition (state, reason, turn, tokens)
 * and the assistant's text as it streams. Quiet under --json.
 */
export function liveOutput(write: (s: string) => void) {
  let streaming = false;
  const endStream = () => {
    if (streaming) write('\n');
    streaming = false;
  };
  return {
    onRecord(r: LogRecord, state: SessionState) {
      if (r.type === 'transition') {
        endStream();
        const run = state.currentRun;
        const u = run?.usage;
        const tokens = u ? `${u.inputTokens + u.cacheReadInputTokens}↑ ${u.outputTokens}↓` : '';
        // The turn the edge was taken in (src/store/turns.ts): the state is already past it.
        const turn = run ? run.turns - (NEW_TURN_REASONS.has(r.data.reason) ? 1 : 0) : '-';
        write(
          `  ${r.data.from.padEnd(16)} → ${r.data.to.padEnd(16)} ${r.data.reason.padEnd(26)} turn ${turn}  ${tokens}\n`,
        );
        return;
      }
      if (
        r.type === 'tool.finished' ||
        r.type === 'model.failed' ||
        r.type === 'backoff.scheduled' ||
        r.type === 'compaction.finished' ||
        r.type === 'hook.decided' ||
        r.type === 'child.started' ||
        r.type === 'child.finished' ||
        r.type === 'memory.loaded' ||
        (r.type === 'permission.decided' && r.data.resolved === 'deny')
      ) {
        endStream();
        write(`    · ${describeRecord(r)}\n`);
      }
    },
    onStreamEvent(e: ModelStreamEvent) {
      if (e.type !== 'text' || !e.text) return;
      if (!streaming) write('    ▸ ');
      streaming = true;
      write(e.text.replace(/\n/g, '\n      '));
    },
    end: endStream,
  };
}
