import type { AnyEventObject } from 'xstate';
import { textOf } from '../model/messages.ts';
import type { RunContext } from './context.ts';
import { builtQuery, compactOutput, response, stopDecision, toolBatch } from './guards.ts';
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
    case 'prompt_blocked':
      return `a UserPromptSubmit hook blocked the prompt: ${builtQuery(event).hooks?.blocked ?? ''}`;
    case 'hook_stopped':
      return `a hook stopped the run: ${hookStopReason(event)}`;
    case 'compaction_blocked_overflow': {
      const out = compactOutput(event);
      return `the context window is exceeded and a PreCompact hook blocked the compaction: ${'refused' in out ? out.reason : ''}`;
    }
    case 'manual_compaction_blocked': {
      const out = compactOutput(event);
      return `a PreCompact hook blocked the compaction: ${'refused' in out ? out.reason : ''}`;
    }
    default:
      return why;
  }
}

/** The stopReason of the hook that said `continue: false`, wherever in the run it answered. */
function hookStopReason(event: AnyEventObject): string {
  const type = String(event.type);
  if (type.endsWith('.buildQuery')) return builtQuery(event).hooks?.stopped ?? '';
  if (type.endsWith('.runTools')) return toolBatch(event).stopped ?? '';
  if (type.endsWith('.compact')) {
    const out = compactOutput(event);
    return 'refused' in out ? out.reason : (out.hookStopped ?? '');
  }
  return '';
}
