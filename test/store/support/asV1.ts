import { SUMMARY_PREFIX } from '../../../src/model/compaction.ts';
import { fold } from '../../../src/store/evolve.ts';
import type { LogRecord } from '../../../src/store/records.ts';
import { compactedHistoryOf, startedInput } from '../../../src/store/refs.ts';
import { emptySessionState } from '../../../src/store/sessionState.ts';

/** The same log written the v1 way: every derived record holds its content, no seals. */
export function asV1(records: readonly LogRecord[]): LogRecord[] {
  let state = emptySessionState();
  return records.map((r) => {
    const before = state;
    state = fold([r], state);
    const { h: _seal, ...rest } = r;
    const v1 = { ...rest, v: 1 } as LogRecord;
    if (v1.type === 'message.appended') v1.data = { message: state.messages.last()!, origin: v1.data.origin };
    if (v1.type === 'tool.started') v1.data = { ...v1.data, input: startedInput(before, v1 as never) };
    if (v1.type === 'compaction.finished' && v1.data.ok && v1.data.messages === undefined) {
      const messages = compactedHistoryOf(before, r as never);
      const { response: _r, kept: _k, tailTokens: _t, ...kept } = v1.data;
      const text = messages[0]!.content as { text: string }[];
      v1.data = { ...kept, summary: text[0]!.text.slice(SUMMARY_PREFIX.length), messages };
    }
    return v1;
  });
}
