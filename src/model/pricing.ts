import type { Usage } from './messages.ts';

/** USD per million tokens. `cacheWrite` is the 5-minute write rate (the API default TTL). */
export interface ModelPrice {
  input: number;
  output: number;
  cacheWrite: number;
  cacheRead: number;
}

// Most models bill cache writes at 1.25× and reads at 0.1× the input rate; the few that do
// not (Opus 5.5) are written out in full below.
function standard(input: number, output: number): ModelPrice {
  return { input, output, cacheWrite: input * 1.25, cacheRead: input * 0.1 };
}

/**
 * The one price table (Anthropic list prices, platform.claude.com model pages). Keys are
 * name prefixes: the longest prefix that matches wins, so `claude-opus-4-5` beats
 * `claude-opus-4`, and dated ids (`claude-sonnet-4-5-20250929`) find their family.
 */
const PRICES: Readonly<Record<string, ModelPrice>> = {
  // Opus 4 and 4.1 kept the Opus 3 price; from 4.5 on, Opus costs a third of that.
  'claude-opus-4': standard(15, 75),
  'claude-opus-4-1': standard(15, 75),
  'claude-opus-4-5': standard(5, 25),
  'claude-opus-4-6': standard(5, 25),
  'claude-opus-4-7': standard(5, 25),
  'claude-opus-4-8': standard(5, 25),
  'claude-sonnet-4': standard(3, 15),
  'claude-haiku-4': standard(1, 5),
  'claude-3-7-sonnet': standard(3, 15),
  'claude-3-5-sonnet': standard(3, 15),
  'claude-3-5-haiku': standard(0.8, 4),
  'claude-3-opus': standard(15, 75),
  'claude-3-haiku': { input: 0.25, output: 1.25, cacheWrite: 0.3, cacheRead: 0.03 },
  // 5.x: Opus rate cards are published in full; Sonnet and Fable list only input/output,
  // so their cache rates assume the standard multipliers.
  'claude-opus-5': standard(5, 25),
  'claude-opus-5-5': { input: 4, output: 20, cacheWrite: 5, cacheRead: 0.2 },
  'claude-sonnet-5': standard(2, 10),
  'claude-fable-5': standard(10, 50),
};

// Cloud providers decorate the same ids: `us.anthropic.claude-…-v1:0` (Bedrock),
// `claude-…@20250805` (Vertex), `anthropic/claude-opus-4.8` (gateways).
function canonicalName(model: string): string {
  const name = model.trim().toLowerCase();
  const at = Math.max(name.lastIndexOf('anthropic.'), name.lastIndexOf('anthropic/'));
  const bare = at >= 0 ? name.slice(at + 'anthropic.'.length) : name;
  return bare.replace(/(\d)\.(\d)/g, '$1-$2');
}

/** A prefix only counts when it ends at a boundary: `claude-opus-4-1` must not price `claude-opus-4-10`. */
function matchesPrefix(name: string, prefix: string): boolean {
  if (!name.startsWith(prefix)) return false;
  return !(/\d$/.test(prefix) && /^\d/.test(name.slice(prefix.length)));
}

/** The price entry for a model name, or null when the model is not in the table. */
export function priceOf(model: string): ModelPrice | null {
  const name = canonicalName(model);
  let best: string | null = null;
  for (const prefix of Object.keys(PRICES)) {
    if (matchesPrefix(name, prefix) && (best === null || prefix.length > best.length)) best = prefix;
  }
  return best === null ? null : (PRICES[best] ?? null);
}

type TokenCounts = Pick<
  Usage,
  'inputTokens' | 'outputTokens' | 'cacheReadInputTokens' | 'cacheCreationInputTokens'
>;

/** Cost in USD of one response's usage; null for a model the table does not know (never throws). */
export function costOf(model: string, usage: TokenCounts): number | null {
  const price = priceOf(model);
  if (!price) return null;
  const micro =
    usage.inputTokens * price.input +
    usage.outputTokens * price.output +
    usage.cacheCreationInputTokens * price.cacheWrite +
    usage.cacheReadInputTokens * price.cacheRead;
  // Rounded to 1e-9 USD like addUsage, so logged costs compare exactly across runs.
  return Math.round((micro / 1_000_000) * 1e9) / 1e9;
}

/** Usage with `costUsd` filled in: 0 when the model has no price (an unknown model is not an error). */
export function withCost(model: string, usage: TokenCounts): Usage {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadInputTokens: usage.cacheReadInputTokens,
    cacheCreationInputTokens: usage.cacheCreationInputTokens,
    costUsd: costOf(model, usage) ?? 0,
  };
}
