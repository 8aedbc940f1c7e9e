import { parseTranscript } from '../../../src/import/claudeCode/readTranscript.ts';
import { type MappedTranscript, mapTranscript } from '../../../src/import/index.ts';
import type { DraftRecord, RecordType } from '../../../src/store/records.ts';
import type { Transcript } from '../../support/claudeCodeTranscript.ts';

/** Maps a builder's transcript as the importer maps a file. */
export function mapLines(t: Transcript, { asSidechain = false } = {}): MappedTranscript {
  return mapTranscript(parseTranscript(t.jsonl(), { file: 'test.jsonl', asSidechain }).events);
}

/** The reasons of the transitions, in order. */
export const reasons = (m: MappedTranscript) =>
  m.drafts.flatMap((d) => (d.type === 'transition' ? [d.data.reason] : []));

/** `from → to (reason)` of every transition, in order. */
export const steps = (m: MappedTranscript) =>
  m.drafts.flatMap((d) =>
    d.type === 'transition' ? [`${d.data.from} → ${d.data.to} (${d.data.reason})`] : [],
  );

export const types = (m: MappedTranscript) => m.drafts.map((d) => d.type);

export function ofType<T extends RecordType>(
  m: MappedTranscript,
  type: T,
): Extract<DraftRecord, { type: T }>[] {
  return m.drafts.filter((d): d is Extract<DraftRecord, { type: T }> => d.type === type);
}
