import { printable } from '../lib/printable.ts';
import { textOf } from '../model/messages.ts';
import { mcpServerText, setupText } from '../store/mcpText.ts';
import { memoryLoadedText } from '../store/memoryText.ts';
import type { LogRecord } from '../store/records.ts';
import { appendedSource, compactedLength } from '../store/refs.ts';
import { plural } from './io.ts';

/**
 * A summary of a value: line breaks and runs of blanks become one space. Only those: a `\r` on
 * its own or any other control stays, for `describeRecord` to show escaped.
 */
const clip = (s: string, n = 100) => {
  const one = s.replace(/(?:\r?\n|[ \t])+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

/**
 * One readable line per record, for `reloop log` and live output: always one line, with every
 * control and format character of the model's or a tool's text escaped (src/lib/printable.ts).
 */
export function describeRecord(r: LogRecord): string {
  return printable(describe(r));
}

function describe(r: LogRecord): string {
  switch (r.type) {
    case 'session.created':
      return `session created${r.data.title ? ` "${r.data.title}"` : ''}${r.data.forkedFrom ? ` (fork of ${r.data.forkedFrom.session}@${r.data.forkedFrom.seq})` : ''}${r.data.importedFrom ? ` (imported from ${r.data.importedFrom.format} ${r.data.importedFrom.file})` : ''}${r.data.parent ? ` (child of ${r.data.parent.session}, agent ${r.data.parent.agent})` : ''}`;
    case 'run.started':
      return `run started (model ${r.data.config.model}, maxTurns ${r.data.config.maxTurns}${r.data.resumedFrom ? `, resumes ${r.data.resumedFrom}` : ''})`;
    case 'user.message':
      return `user: ${clip(textOf(r.data.message.content))}`;
    case 'message.appended':
      return r.data.message
        ? `+ ${r.data.origin} (${r.data.message.role}): ${clip(messageSummary(r.data.message.content))}`
        : `+ ${r.data.origin}: ${appendedSource(r.data)}`;
    case 'model.requested':
      return `→ model ${r.data.model} (${r.data.purpose}, attempt ${r.data.attempt}, max_tokens ${r.data.maxTokens}, ${r.data.messageCount} messages)`;
    case 'model.responded': {
      const u = r.data.response.usage;
      return `← ${r.data.response.stopReason ?? 'null'} (${u.inputTokens} in / ${u.outputTokens} out, $${u.costUsd.toFixed(4)}): ${clip(messageSummary(r.data.response.content), 70)}`;
    }
    case 'model.failed':
      return `✗ model ${r.data.failure.kind}${r.data.failure.status ? ` ${r.data.failure.status}` : ''}: ${clip(r.data.failure.message)}`;
    case 'backoff.scheduled':
      return `backoff ${r.data.delayMs} ms before attempt ${r.data.attempt + 1}${r.data.retryAfterMs !== undefined ? ` (retry-after ${r.data.retryAfterMs} ms)` : ''}`;
    case 'tool.started':
      // v2 leaves out an input that is the tool_use block's own (in the response before it).
      return `tool ${r.data.name} started ${r.data.input === undefined ? '(input as in its tool_use)' : clip(JSON.stringify(r.data.input), 80)}`;
    case 'tool.finished':
      return `tool ${r.data.name} ${r.data.outcome}${r.data.synthetic ? ' (synthetic)' : ''} in ${Math.round(r.data.durationMs)} ms: ${clip(typeof r.data.result.content === 'string' ? r.data.result.content : JSON.stringify(r.data.result.content), 70)}`;
    case 'permission.decided':
      return `permission ${r.data.name}: ${r.data.decision} → ${r.data.resolved} (${r.data.by})${r.data.message ? `: ${clip(r.data.message, 60)}` : ''}`;
    case 'hook.decided': {
      const d = r.data;
      const who = d.command ? ` \`${clip(d.command, 50)}\`${d.source ? ` (${d.source})` : ''}` : '';
      const why = d.reason ? `: ${clip(d.reason, 70)}` : '';
      const shown = d.systemMessage ? ` — ${clip(d.systemMessage, 70)}` : '';
      const context = d.output ? ` [+${d.output.length} characters of context]` : '';
      return `hook ${d.hook}${who}: ${d.decision}${why}${shown}${context}`;
    }
    case 'compaction.finished':
      return r.data.ok
        ? `compaction (${r.data.mode}) ${r.data.tokensBefore} → ${r.data.tokensAfter} tokens, ${plural(compactedLength(r.data), 'message')}`
        : `compaction (${r.data.mode}) failed: ${clip(r.data.error)}`;
    case 'mcp.server':
      return clip(mcpServerText(r), 200);
    case 'memory.loaded':
      return clip(memoryLoadedText(r), 200);
    case 'run.setup':
      return clip(setupText(r), 200);
    case 'actor.failed':
      return `${r.data.actor} failed: ${clip(r.data.message)}`;
    case 'child.started':
      return `sub-agent ${r.data.agent} started: session ${r.data.child} (for ${r.data.toolUseId})`;
    case 'child.finished':
      return `sub-agent ${r.data.child} ${r.data.status} (${r.data.reason}), ${r.data.turns} turns, ${r.data.usage.inputTokens} in / ${r.data.usage.outputTokens} out${r.data.error ? ` — ${clip(r.data.error)}` : ''}`;
    case 'abort.requested':
      return `abort requested${r.data.reason ? `: ${r.data.reason}` : ''}`;
    case 'approval.requested':
      return r.data.child
        ? `waits for sub-agent ${r.data.child}, parked on approvals (${r.data.toolUseId})`
        : `approval requested for ${r.data.tool} ${clip(JSON.stringify(r.data.input), 70)} (${r.data.toolUseId})`;
    case 'approval.decided':
      return `approval ${r.data.decision === 'allow' ? 'granted' : 'denied'} for ${r.data.toolUseId} by ${r.data.by}${r.data.message ? `: ${clip(r.data.message, 60)}` : ''}`;
    case 'transition':
      return `${r.data.from} → ${r.data.to}  [${r.data.reason}]`;
    case 'import.unmapped':
      return `transcript line ${r.data.line} (${r.data.lineType}) not mapped: ${clip(r.data.why, 80)}`;
    case 'run.ended':
      return `run ended ${r.data.status} (${r.data.reason}), ${plural(r.data.turns, 'turn')}, ${r.data.usage.inputTokens} in / ${r.data.usage.outputTokens} out, $${r.data.usage.costUsd.toFixed(4)}${r.data.error ? ` — ${clip(r.data.error)}` : ''}`;
    default: {
      const never: never = r;
      return JSON.stringify(never);
    }
  }
}

function messageSummary(content: Parameters<typeof textOf>[0]): string {
  if (typeof content === 'string') return content;
  return content
    .map((b) => {
      switch (b.type) {
        case 'text':
          return b.text;
        case 'tool_use':
          return `[tool_use ${b.name}]`;
        case 'tool_result':
          return `[tool_result${b.is_error ? ' error' : ''}]`;
        default:
          return `[${b.type}]`;
      }
    })
    .join(' ');
}
