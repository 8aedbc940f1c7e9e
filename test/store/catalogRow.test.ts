import { describe, expect, it } from 'vitest';
import { updateCatalogRow } from '../../src/store/catalogRow.ts';
import { StreamBuilder } from './support/records.ts';

describe('catalog row status', () => {
  it('a run open in the log is running; ended, it takes the run status', () => {
    const s = new StreamBuilder('s1');
    const open = updateCatalogRow(undefined, [s.created('t'), s.runStarted(), s.user('hi')]);
    expect(open.status).toBe('running');
    expect(updateCatalogRow(open, [s.runEnded('failed', 'model_error')]).status).toBe('failed');
  });

  it('given a fork taken mid-run, the copied open run is interrupted until a new run starts', () => {
    // The fork's records 2..3 are copies of the source's: its run.started opened a run nobody runs.
    const s = new StreamBuilder('fork');
    const forked = updateCatalogRow(undefined, [
      s.created('t', { session: 'src', seq: 3 }),
      s.runStarted('r1'),
      s.user('hi'),
    ]);
    expect(forked.status).toBe('interrupted');
    // `run --resume` closes it, then starts a run of its own.
    const resumed = updateCatalogRow(forked, [s.runEnded('aborted', 'interrupted'), s.runStarted('r2')]);
    expect(resumed.status).toBe('running');
  });
});
