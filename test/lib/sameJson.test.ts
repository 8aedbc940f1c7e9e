import { describe, expect, it } from 'vitest';
import { sameJson } from '../../src/lib/sameJson.ts';

describe('sameJson', () => {
  it.each([
    [
      { a: 1, b: [1, { c: 'x' }] },
      { b: [1, { c: 'x' }], a: 1 },
    ],
    [{ a: 1, b: undefined }, { a: 1 }],
    [null, null],
    ['s', 's'],
    [[], []],
  ])('equal: %j and %j', (a, b) => {
    expect(sameJson(a, b)).toBe(true);
    expect(sameJson(b, a)).toBe(true);
  });

  it.each([
    [{ a: 1 }, { a: 2 }],
    [{ a: 1 }, { a: 1, b: 2 }],
    [
      [1, 2],
      [2, 1],
    ],
    [[1], { 0: 1 }],
    [null, {}],
    [1, '1'],
    [{ a: null }, { a: undefined }],
  ])('different: %j and %j', (a, b) => {
    expect(sameJson(a, b)).toBe(false);
    expect(sameJson(b, a)).toBe(false);
  });
});
