import type { AnyEventObject } from 'xstate';
import { textOf } from '../model/messages.ts';
import type { RunContext } from './context.ts';
import { response, stopDecision } from './guards.ts';
import type { TerminalReason } from './reasons.ts';

/** The sentence a failed run carries in `run.ended.error`, built from the facts that ended it. */
export function failureText(why: TerminalReason, c: RunContext, event: AnyEventObject): string {
  const cfg = c.config;
  switch (why) {
    case 'refused': {
      const said = textOf(response(event).content).trim();
      return `the model refused to continue${said ? `: ${said.slice(0, 500)}` : ''}`;
    }
    case 'budget_exhausted': {
      // Runs after takeResponse: the context's usage already includes this response.
      const cost = c.usage.costUsd;
      const tokens = c.usage.inputTokens + c.usage.outputTokens;
      const limits = [
        cfg.maxBudgetUsd !== null ? `$${cost.toFixed(4)} of $${cfg.maxBudgetUsd}` : null,
        cfg.maxBudgetTokens !== null ? `${tokens} of ${cfg.maxBudgetTokens} tokens` : null,
      ].filter(Boolean);
      return `the run's budget is spent (${limits.join(', ')})`;
    }
    case 'prompt_too_long':
      return 'the context window is exceeded again after compaction';
    case 'max_tokens_exhausted':
      return `the output was still cut at max_tokens after escalation and ${c.output.recoveries} recoveries`;
    case 'max_turns_reached':
      return `stopped after maxTurns (${cfg.maxTurns}) turns`;
    case 'stop_hook_prevented': {
      const d = stopDecision(event);
      return `a stop hook ended the run: ${'reason' in d ? d.reason : ''}`;
    }
    case 'stop_hook_block_limit': {
      const d = stopDecision(event);
      return `stop hooks blocked the finish ${c.stop.blocks + 1} times in a row (cap ${cfg.stopHookBlockCap}): ${'reason' in d ? d.reason : ''}`;
    }
    default:
      return why;
  }
}
