import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { historyProblems } from '../../src/model/history.ts';
import { verifyReplay } from '../../src/replay/verify.ts';
import { evolve } from '../../src/store/evolve.ts';
import { emptySessionState } from '../../src/store/sessionState.ts';
import { parseRecordLine } from '../../src/store/validate.ts';

const dir = new URL('../fixtures/logs/', import.meta.url);
const logs = readdirSync(dir).filter((f) => f.endsWith('.jsonl'));

function load(file: string) {
  return readFileSync(new URL(file, dir), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line, i) => parseRecordLine(line, { file, line: i + 1 }));
}

describe('golden logs keep replaying', () => {
  it('has golden logs to check', () => expect(logs.length).toBeGreaterThanOrEqual(4));

  it.each(logs)('%s validates, folds to a valid history and verify-replays identically', async (file) => {
    const records = load(file);
    const state = records.reduce(evolve, emptySessionState());
    expect(state.currentRun).toBeNull();
    expect(historyProblems(state.messages.view())).toEqual([]);
    const report = await verifyReplay(records);
    expect(report.divergence).toBeNull();
    expect(report.transitions).toBe(records.filter((r) => r.type === 'transition').length);
  });
});
