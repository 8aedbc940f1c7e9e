import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { queryLoopMachine } from '../../../src/machines/queryLoop.machine.ts';
import {
  CONTINUATION_REASONS,
  INTRA_TURN_REASONS,
  REASON_DOCS,
  TERMINAL_STATUS,
  type TransitionReason,
} from '../../../src/machines/reasons.ts';
import { AREAS, REASON_OWNER, reasonsOwnedBy } from './reasonSpec.ts';

/**
 * The meta-test of the reason specs: every reason of the vocabulary has a spec file that must
 * drive the real runtime into it. Each spec file ends with a test that fails when it did not
 * assert, in a full transition sequence, every reason it owns; this file checks that the
 * ownership table covers the whole vocabulary and that every spec file runs that final check.
 */
const ALL = Object.keys(REASON_DOCS).sort() as TransitionReason[];

describe('reason coverage', () => {
  it('every reason of REASON_DOCS is owned by a spec file', () => {
    expect(Object.keys(REASON_OWNER).sort()).toEqual(ALL);
    expect(AREAS.flatMap((a) => reasonsOwnedBy(a)).sort()).toEqual(ALL);
  });

  it('every spec file exists, runs its own coverage check and names each reason it owns', () => {
    for (const area of AREAS) {
      const source = readFileSync(new URL(`./${area}.test.ts`, import.meta.url), 'utf8');
      expect(source, area).toContain(`reasonSpec('${area}')`);
      expect(source, area).toContain('spec.ownedReasonsAsserted();');
      for (const reason of reasonsOwnedBy(area))
        expect(source, `${area}: ${reason}`).toContain(`'${reason}'`);
    }
  });

  it('the vocabulary is split into continuation, terminal and intra-turn reasons, without overlap', () => {
    const parts = [...CONTINUATION_REASONS, ...Object.keys(TERMINAL_STATUS), ...INTRA_TURN_REASONS];
    expect(parts.sort()).toEqual(ALL);
  });

  it('every edge of the chart carries a reason of the vocabulary, and every reason is on an edge', () => {
    const onEdges = new Set<string>();
    for (const node of Object.values(queryLoopMachine.root.states)) {
      for (const transitions of node.transitions.values()) {
        for (const t of transitions) {
          const reason = (t.meta as { reason?: string } | undefined)?.reason;
          expect(reason && Object.hasOwn(REASON_DOCS, reason), `${node.key} on ${t.eventType}`).toBe(true);
          onEdges.add(reason!);
        }
      }
    }
    expect([...onEdges].sort()).toEqual(ALL);
  });
});
