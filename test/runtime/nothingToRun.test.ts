import { describe, expect, it } from 'vitest';
import { NothingToRunError } from '../../src/runtime/session.ts';
import { scriptedSession } from '../support/harness.ts';

describe('submit without a prompt', () => {
  it('refuses on a session with no history, and writes nothing (no run is left open)', async () => {
    const h = await scriptedSession([]);
    await expect(h.session.submit(null)).rejects.toBeInstanceOf(NothingToRunError);
    expect((await h.records()).map((r) => r.type)).toEqual(['session.created']);
    expect(h.session.state.currentRun).toBeNull();
  });
});
