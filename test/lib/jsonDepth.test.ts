import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../src/lib/jsonDepth.ts';
import { sameJson } from '../../src/lib/sameJson.ts';
import { Redactor } from '../../src/lib/secrets.ts';

/** `depth` levels of `{ a: … }` (or `[…]`) around `bottom`, built without recursion. */
function nested(depth: number, bottom: unknown = 'x', array = false): unknown {
  let v = bottom;
  for (let i = 0; i < depth; i++) v = array ? [v] : { a: v };
  return v;
}

const SECRET = 'sk-ant-0123456789abcdef0123456789abcdef';

/*
 * Issue 18, item 7: every walk over JSON a model, a script or a transcript controls must survive
 * any depth. 100 000 levels overflow any recursive walk (and JSON.stringify) many times over.
 */
describe('walks over deep JSON do not recurse', () => {
  it('nestedDeeperThan counts objects and arrays, stopping past the limit', () => {
    expect(nestedDeeperThan('s')).toBe(false);
    expect(nestedDeeperThan({})).toBe(false);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false); // the innermost `{ a: 'x' }` is level 512
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH - 1, {}, true))).toBe(false);
    expect(nestedDeeperThan(nested(MAX_JSON_DEPTH, {}, true))).toBe(true);
    expect(nestedDeeperThan(nested(100_000))).toBe(true);
    expect(nestedDeeperThan(nested(2, {}), 3)).toBe(false);
    expect(nestedDeeperThan(nested(3, {}), 3)).toBe(true);
  });

  it('the redactor masks a secret 100 000 levels down, copying only the path to it', () => {
    const r = new Redactor(new Map([['ANTHROPIC_API_KEY', SECRET]]));
    const input = { keep: { same: true }, deep: nested(100_000, `key=${SECRET}`) };
    const out = r.redact(input) as typeof input;
    expect(out === input).toBe(false); // not .not.toBe: vitest deep-compares on a mismatch (recursively)
    expect(out.keep).toBe(input.keep);
    let v: unknown = out.deep;
    for (let i = 0; i < 100_000; i++) v = (v as { a: unknown }).a;
    expect(v).toMatch(/^key=\[REDACTED:ANTHROPIC_API_KEY\]\**$/);
    const plain = nested(100_000, [1, 'two', null]);
    expect(r.redact(plain)).toBe(plain);
  });

  it('sameJson compares values 100 000 levels deep', () => {
    expect(sameJson(nested(100_000), nested(100_000))).toBe(true);
    expect(sameJson(nested(100_000), nested(100_000, 'y'))).toBe(false);
    expect(sameJson(nested(100_000, 1, true), nested(100_000, 1, true))).toBe(true);
  });
});
