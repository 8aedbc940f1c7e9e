import type { SessionEvent } from '../../runtime/streamEvents.ts';
import { out, plural, writeText } from '../io.ts';

const INPUT_CLIP = 160;
const RESULT_CLIP = 100;

/** `$0.0400`: four places, as `run` prints costs. */
export function dollars(usd: number): string {
  return `$${usd.toFixed(4)}`;
}

/** The compact status line of one transition: `requesting → dispatchingTools · tool_use_requested · turn 3 · $0.04`. */
export function statusLine(e: {
  from: string;
  to: string;
  reason: string;
  turn: number;
  cost_usd: number;
}): string {
  return `${e.from} → ${e.to} · ${e.reason} · turn ${e.turn} · ${dollars(e.cost_usd)}`;
}

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
}

/** A tool result's content as a short line: its text (or its blocks' text) clipped, and how many lines it had. */
export function shortResult(content: unknown): string {
  let text: string;
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content))
    text = content
      .map((b: { type?: string; text?: string }) =>
        b?.type === 'text' ? (b.text ?? '') : `[${b?.type ?? '?'}]`,
      )
      .join(' ');
  else text = JSON.stringify(content) ?? '';
  const lines = text.split('\n').filter((l) => l.trim() !== '').length;
  return `${clip(text, RESULT_CLIP)}${lines > 1 ? ` (${plural(lines, 'line')})` : ''}`;
}

/**
 * What the interactive session shows of a run: the model's text as it streams, each tool call
 * with its input, its result in short, a status line per transition, and the end. Every line
 * goes through io.ts (escaped); the model's text keeps its newlines and nothing else.
 */
export class Transcript {
  private midLine = false;

  /** Ends a line of streamed text before anything else is printed. */
  private endText(): void {
    if (this.midLine) out();
    this.midLine = false;
  }

  line(text: string): void {
    this.endText();
    out(text);
  }

  show(e: SessionEvent): void {
    switch (e.type) {
      case 'stream_event':
        if (e.event.type === 'content_block_delta' && e.event.delta.type === 'text_delta') {
          const text = e.event.delta.text;
          if (!text) return;
          if (!this.midLine) writeText('  ');
          writeText(text.replace(/\n/g, '\n  '));
          this.midLine = true;
        }
        return;
      case 'system':
        if (e.subtype === 'transition') this.line(`    · ${statusLine(e)}`);
        else if (e.subtype === 'tool_call')
          this.line(`  ⏺ ${e.name} ${clip(JSON.stringify(e.input) ?? '', INPUT_CLIP)}`);
        else if (e.subtype === 'tool_result')
          this.line(`    ⎿ ${e.outcome === 'ok' ? '' : `${e.outcome}: `}${shortResult(e.content)}`);
        else if (e.subtype === 'permission' && e.resolved === 'deny')
          this.line(
            `    ✗ ${e.name} denied by ${e.by}${e.message ? `: ${clip(e.message, RESULT_CLIP)}` : ''}`,
          );
        return;
      case 'result':
        this.line(
          `${e.status === 'completed' ? '✓' : '✗'} ${e.status} (${e.reason}) · ${plural(e.num_turns, 'turn')} · ${e.usage.inputTokens} in / ${e.usage.outputTokens} out · ${dollars(e.total_cost_usd)}`,
        );
        if (e.error) this.line(`  error: ${clip(e.error, 300)}`);
        return;
      default:
        return;
    }
  }

  /** Called when the run is over, whatever happened: the cursor is at the start of a line. */
  end(): void {
    this.endText();
  }
}
