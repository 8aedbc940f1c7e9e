import { type Message, textOf } from '../model/messages.ts';
import { mcpServerText, setupText } from '../store/mcpText.ts';
import { memoryLoadedText } from '../store/memoryText.ts';
import type { LogRecord } from '../store/records.ts';
import { appendedSource, compactedLength } from '../store/refs.ts';

const MAX = 160;

function clip(text: string, max = MAX): string {
  // Only the head is shown: never collapse the whitespace of a whole tool output.
  const one = (text.length > max * 4 ? text.slice(0, max * 4) : text).replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function said(m: Message | undefined): string {
  return m ? textOf(m.content) || json(m.content) : '';
}

/**
 * One line per record for the viewer's timeline: what happened, never the whole payload (the
 * messages are in the page once already). `appended` is what the record added to the history,
 * as `evolve` sees it: a record that refers to its message instead of repeating it (schema v2)
 * still reads right. Log data: the page renders it with textContent.
 */
export function recordNote(r: LogRecord, appended?: readonly Message[]): string {
  switch (r.type) {
    case 'session.created':
      return clip(`session ${r.data.title ?? ''} ${r.data.cwd ? `in ${r.data.cwd}` : ''}`);
    case 'run.started':
      return clip(
        `model ${r.data.config.model}, maxTurns ${r.data.config.maxTurns}${r.data.resumedFrom ? `, resumes ${r.data.resumedFrom}` : ''}`,
      );
    case 'user.message':
      return clip(`user: ${said(appended?.[0] ?? r.data.message)}`);
    case 'message.appended': {
      const m = appended?.[0] ?? r.data.message;
      return clip(`${r.data.origin}: ${m ? said(m) : appendedSource(r.data)}`);
    }
    case 'model.requested':
      return clip(
        `${r.data.purpose} request to ${r.data.model}, max_tokens ${r.data.maxTokens}, attempt ${r.data.attempt}, ${r.data.messageCount} messages`,
      );
    case 'model.responded': {
      const { stopReason, usage } = r.data.response;
      return clip(
        `${r.data.purpose} response: ${stopReason ?? 'no stop_reason'}, in ${usage.inputTokens} / out ${usage.outputTokens} tokens`,
      );
    }
    case 'model.failed': {
      const f = r.data.failure;
      return clip(
        `${f.kind}${f.status ? ` ${f.status}` : ''}${f.errorType ? ` ${f.errorType}` : ''}: ${f.message}`,
      );
    }
    case 'backoff.scheduled':
      return `attempt ${r.data.attempt}: wait ${Math.round(r.data.delayMs)} ms`;
    case 'tool.started':
      return clip(
        `${r.data.name} ${r.data.input === undefined ? '(input as in its tool_use)' : json(r.data.input)}`,
      );
    case 'tool.finished':
      return clip(
        `${r.data.name} ${r.data.outcome} in ${r.data.durationMs.toFixed(1)} ms${r.data.synthetic ? ' (synthetic)' : ''}`,
      );
    case 'permission.decided':
      return clip(
        `${r.data.name}: ${r.data.decision} → ${r.data.resolved} by ${r.data.by}${r.data.message ? ` (${r.data.message})` : ''}`,
      );
    case 'hook.decided':
      return clip(`${r.data.hook} hook: ${r.data.decision}${r.data.reason ? ` (${r.data.reason})` : ''}`);
    case 'compaction.finished':
      return r.data.ok
        ? `${r.data.mode} compaction: ${r.data.tokensBefore} → ${r.data.tokensAfter} tokens, ${compactedLength(r.data)} messages`
        : clip(`${r.data.mode} compaction failed: ${r.data.error}`);
    case 'child.started':
      return clip(`sub-agent ${r.data.agent}: session ${r.data.child}`);
    case 'child.finished':
      return clip(
        `sub-agent ${r.data.child}: ${r.data.status} (${r.data.reason}) after ${r.data.turns} turns`,
      );
    case 'abort.requested':
      return clip(`abort${r.data.reason ? `: ${r.data.reason}` : ''}`);
    case 'approval.requested':
      return clip(`approval asked for ${r.data.tool} ${json(r.data.input)}`);
    case 'approval.decided':
      return clip(`${r.data.decision} by ${r.data.by}${r.data.message ? ` (${r.data.message})` : ''}`);
    case 'mcp.server':
      return clip(mcpServerText(r), 200);
    case 'memory.loaded':
      return clip(memoryLoadedText(r), 200);
    case 'run.setup':
      return clip(setupText(r), 200);
    case 'actor.failed':
      return clip(`${r.data.actor} failed: ${r.data.message}`);
    case 'transition':
      return clip(`${r.data.from} → ${r.data.to}: ${r.data.reason}`);
    case 'import.unmapped':
      return clip(`transcript line ${r.data.line} (${r.data.lineType}) not mapped: ${r.data.why}`);
    case 'run.ended':
      return clip(
        `${r.data.status} (${r.data.reason}) after ${r.data.turns} turns${r.data.error ? `: ${r.data.error}` : ''}`,
      );
    default: {
      const never: never = r;
      return clip(json(never));
    }
  }
}
