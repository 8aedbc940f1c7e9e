import type { RunConfig } from '../store/records.ts';

export const DEFAULT_MODEL = 'claude-sonnet-4-6';

/** Context-window budget for auto-compaction: window − summary reserve − buffer. */
export const SUMMARY_RESERVE_TOKENS = 20_000;
export const COMPACT_BUFFER_TOKENS = 13_000;

export const DEFAULT_SYSTEM_PROMPT =
  'You are a coding agent working in a repository. Use the tools to read, run and change code. ' +
  'Make the smallest change that solves the task, verify it, then say what you did.';

export type RunSettings = Partial<RunConfig> & {
  summaryReserveTokens?: number;
  compactBufferTokens?: number;
};

/** Fills every limit with its default; the result is recorded in `run.started`. */
export function resolveRunConfig(s: RunSettings = {}): RunConfig {
  const contextWindow = s.contextWindow ?? 200_000;
  const threshold =
    s.autoCompactThreshold ??
    contextWindow -
      (s.summaryReserveTokens ?? SUMMARY_RESERVE_TOKENS) -
      (s.compactBufferTokens ?? COMPACT_BUFFER_TOKENS);
  return {
    model: s.model ?? DEFAULT_MODEL,
    fallbackModel: s.fallbackModel ?? null,
    maxTurns: s.maxTurns ?? 100,
    defaultMaxTokens: s.defaultMaxTokens ?? 8_192,
    escalatedMaxTokens: s.escalatedMaxTokens ?? 64_000,
    maxTokensRecoveries: s.maxTokensRecoveries ?? 3,
    maxTransportAttempts: s.maxTransportAttempts ?? 10,
    overloadsBeforeFallback: s.overloadsBeforeFallback ?? 3,
    contextWindow,
    autoCompactThreshold: Math.max(1, threshold),
    autoCompactBreaker: s.autoCompactBreaker ?? 3,
    stopHookBlockCap: s.stopHookBlockCap ?? 8,
    maxBudgetUsd: s.maxBudgetUsd ?? null,
    maxBudgetTokens: s.maxBudgetTokens ?? null,
    system: s.system ?? DEFAULT_SYSTEM_PROMPT,
    ...(s.compactNow ? { compactNow: true as const } : {}),
  };
}
