import * as crypto from 'node:crypto';

/**
 * Trace and span ids derived from the log: a run's trace from its session and run, a span from
 * its session, run and what it is (a seq, a tool call id). Exporting a session twice, or live
 * and then again from its log, gives the same ids, so a back-end sees one trace, not two.
 */

/** One-shot hashing where Node has it (20.12+): half the cost of a Hash object per id. */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function'
    ? (text) => crypto.hash('sha256', text, 'hex')
    : (text) => crypto.createHash('sha256').update(text).digest('hex');

function hexOf(parts: readonly string[], chars: number): string {
  const hex = sha256(parts.join('\u0000')).slice(0, chars);
  // An all-zero id is invalid in OpenTelemetry; a 2^-64 chance, made impossible.
  return /^0+$/.test(hex) ? `${hex.slice(0, -1)}1` : hex;
}

export function traceIdOf(session: string, run: string): string {
  return hexOf(['reloop/trace', session, run], 32);
}

export function runSpanIdOf(session: string, run: string): string {
  return hexOf(['reloop/run', session, run], 16);
}

export function chatSpanIdOf(session: string, run: string, seq: number): string {
  return hexOf(['reloop/chat', session, run, String(seq)], 16);
}

/** Keyed by the call id, not a seq: a sub-agent's session names its parent call by that id only. */
export function toolSpanIdOf(session: string, run: string, toolUseId: string): string {
  return hexOf(['reloop/tool', session, run, toolUseId], 16);
}

/**
 * An OpenTelemetry `IdGenerator` that hands out the id the sink asks for. reloop's own tracer
 * providers use it, so spans made through the OpenTelemetry API carry the derived ids; with no id
 * asked for (anyone else's spans on the same provider) it gives random ones.
 */
export class LogIdGenerator {
  private nextTrace: string | null = null;
  private nextSpan: string | null = null;

  /** The ids of the span about to be started (cleared by `release`). */
  claim(traceId: string, spanId: string): void {
    this.nextTrace = traceId;
    this.nextSpan = spanId;
  }

  release(): void {
    this.nextTrace = null;
    this.nextSpan = null;
  }

  generateTraceId(): string {
    return this.nextTrace ?? crypto.randomBytes(16).toString('hex');
  }

  generateSpanId(): string {
    return this.nextSpan ?? crypto.randomBytes(8).toString('hex');
  }
}

/** The one generator reloop's sinks claim ids on; give it to a provider to get the log's ids. */
export const logIdGenerator = new LogIdGenerator();
