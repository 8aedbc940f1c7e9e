import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REASON_DOCS, TERMINAL_STATUS, TransitionReasonSchema } from '../../src/machines/reasons.ts';

const doc = readFileSync(new URL('../../docs/reasons.md', import.meta.url), 'utf8');

describe('docs/reasons.md', () => {
  it.each(Object.entries(REASON_DOCS))('documents %s with its doc line', (reason, line) => {
    expect(doc).toContain(`| \`${reason}\` |`);
    expect(doc).toContain(line);
  });

  it('names no reason the code does not have', () => {
    const named = [...doc.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    for (const r of named) expect(TransitionReasonSchema.safeParse(r).success, r).toBe(true);
  });

  it('gives every terminal reason its status', () => {
    for (const [r, status] of Object.entries(TERMINAL_STATUS))
      expect(doc).toContain(`| \`${r}\` | ${status} |`);
  });
});
