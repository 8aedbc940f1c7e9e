import { describe, expect, it } from 'vitest';
import { costOf, priceOf, withCost } from '../../src/model/pricing.ts';

const MILLION = {
  inputTokens: 1_000_000,
  outputTokens: 0,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};

describe('priceOf', () => {
  it.each([
    ['claude-sonnet-4-5-20250929', 3, 15],
    ['claude-sonnet-4-20250514', 3, 15],
    ['claude-sonnet-4-6', 3, 15],
    ['claude-opus-4-20250514', 15, 75],
    ['claude-opus-4-1-20250805', 15, 75],
    ['claude-opus-4-5-20251101', 5, 25],
    ['claude-opus-4-8', 5, 25],
    ['claude-haiku-4-5-20251001', 1, 5],
    ['claude-3-7-sonnet-20250219', 3, 15],
    ['claude-3-5-sonnet-latest', 3, 15],
    ['claude-3-5-haiku-20241022', 0.8, 4],
    ['claude-3-haiku-20240307', 0.25, 1.25],
    ['claude-opus-5', 5, 25],
    ['claude-opus-5-5', 4, 20],
  ])('%s costs $%d in / $%d out per MTok', (model, input, output) => {
    expect(priceOf(model)).toMatchObject({ input, output });
  });

  it('uses the longest matching prefix, at a boundary', () => {
    expect(priceOf('claude-opus-4-5')?.input).toBe(5);
    expect(priceOf('claude-opus-4')?.input).toBe(15);
    // `claude-opus-4-1` must not swallow a hypothetical 4.10.
    expect(priceOf('claude-opus-4-10')?.input).toBe(15);
  });

  it('understands Bedrock, Vertex and gateway spellings', () => {
    expect(priceOf('us.anthropic.claude-sonnet-4-5-20250929-v1:0')?.input).toBe(3);
    expect(priceOf('claude-opus-4-1@20250805')?.input).toBe(15);
    expect(priceOf('anthropic/claude-opus-4.8')?.input).toBe(5);
    expect(priceOf('Claude-Haiku-4-5')?.input).toBe(1);
  });

  it('has cache rates: 1.25× write, 0.1× read, except where published otherwise', () => {
    expect(priceOf('claude-sonnet-4-5')).toEqual({
      input: 3,
      output: 15,
      cacheWrite: 3.75,
      cacheRead: expect.closeTo(0.3, 9),
    });
    expect(priceOf('claude-opus-5-5')).toEqual({ input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 });
  });

  it('returns null for names it does not know', () => {
    expect(priceOf('gpt-4o')).toBeNull();
    expect(priceOf('')).toBeNull();
    expect(priceOf('claude')).toBeNull();
    expect(priceOf('claude-haiku-5-5')).toBeNull();
  });
});

describe('costOf', () => {
  it('adds the four token kinds at their own rates', () => {
    const cost = costOf('claude-sonnet-4-5-20250929', {
      inputTokens: 1000,
      outputTokens: 500,
      cacheCreationInputTokens: 4000,
      cacheReadInputTokens: 20_000,
    });
    // 1000·3 + 500·15 + 4000·3.75 + 20000·0.3 = 31 500 µ$ per million → $0.0315
    expect(cost).toBe(0.0315);
  });

  it('prices a million input tokens at the list price', () => {
    expect(costOf('claude-opus-4-1', MILLION)).toBe(15);
    expect(costOf('claude-haiku-4-5', { ...MILLION, inputTokens: 0, outputTokens: 1_000_000 })).toBe(5);
  });

  it('is null for an unknown model, 0 for no tokens', () => {
    expect(costOf('my-local-llama', MILLION)).toBeNull();
    expect(costOf('claude-sonnet-4-5', { ...MILLION, inputTokens: 0 })).toBe(0);
  });
});

describe('withCost', () => {
  it('fills costUsd and keeps the counts', () => {
    expect(withCost('claude-3-5-haiku-20241022', { ...MILLION, outputTokens: 1_000_000 })).toEqual({
      ...MILLION,
      outputTokens: 1_000_000,
      costUsd: 4.8,
    });
  });

  it('uses 0 for an unknown model', () => {
    expect(withCost('not-a-model', MILLION).costUsd).toBe(0);
  });
});
