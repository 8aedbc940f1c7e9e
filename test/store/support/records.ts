import { ZERO_USAGE } from '../../../src/model/messages.ts';
import {
  CURRENT_SCHEMA_VERSION,
  type LogRecord,
  type RecordData,
  type RecordType,
  type RunConfig,
  type RunStatus,
} from '../../../src/store/records.ts';
import { resealed, sealRecords } from '../../../src/store/seal.ts';

export const RUN_CONFIG: RunConfig = {
  model: 'claude-test',
  fallbackModel: null,
  maxTurns: 10,
  defaultMaxTokens: 8192,
  escalatedMaxTokens: 32000,
  maxTokensRecoveries: 3,
  maxTransportAttempts: 10,
  overloadsBeforeFallback: 3,
  contextWindow: 200_000,
  autoCompactThreshold: 167_000,
  autoCompactBreaker: 3,
  stopHookBlockCap: 8,
  maxBudgetUsd: null,
  maxBudgetTokens: null,
};

/**
 * Builds valid records for one session with consecutive seqs and a fake clock, so a test reads as
 * the story it tells: `s.created('fix the test'), s.user('hi'), s.transition('building', 'requesting')`.
 */
export class StreamBuilder {
  seq: number;
  at: number;
  run: string | null = null;

  constructor(
    readonly session: string,
    { seq = 0, at = 1_700_000_000_000 }: { seq?: number; at?: number } = {},
  ) {
    this.seq = seq;
    this.at = at;
  }

  record<T extends RecordType>(type: T, data: RecordData<T>): LogRecord {
    this.seq++;
    this.at += 1000;
    return {
      v: CURRENT_SCHEMA_VERSION,
      seq: this.seq,
      at: this.at,
      session: this.session,
      run: this.run,
      type,
      data,
    } as LogRecord;
  }

  created(title?: string, forkedFrom?: { session: string; seq: number }): LogRecord {
    return this.record('session.created', {
      ...(title !== undefined ? { title } : {}),
      ...(forkedFrom ? { forkedFrom } : {}),
    });
  }

  /** A sub-agent's first record: linked to the `Task` call that started it. */
  child(parent: { session: string; run: string | null; toolUseId: string | null; agent: string }): LogRecord {
    return this.record('session.created', { title: 'sub-task', parent });
  }

  user(text: string): LogRecord {
    return this.record('user.message', { message: { role: 'user', content: text } });
  }

  transition(from = 'building', to = 'requesting', reason = 'query_built'): LogRecord {
    return this.record('transition', { from, to, trigger: 'xstate.done.actor.build', reason });
  }

  runStarted(run = `run-${this.seq + 1}`): LogRecord {
    this.run = run;
    return this.record('run.started', { config: RUN_CONFIG, autoCompactFailures: 0 });
  }

  runEnded(status: RunStatus = 'completed', reason = 'completed'): LogRecord {
    return this.record('run.ended', { status, reason, turns: 1, usage: { ...ZERO_USAGE } });
  }

  /** `n` transitions: filler for long streams. */
  transitions(n: number): LogRecord[] {
    return Array.from({ length: n }, () => this.transition());
  }
}

/** What a store reads back after these records were appended from the start: each v2 record sealed. */
export function sealed(records: readonly LogRecord[]): LogRecord[] {
  return resealed(records);
}

/** The lines a file store writes for these records appended from the start. */
export function sealedLines(records: readonly LogRecord[]): string[] {
  return sealRecords(undefined, records).lines;
}

/** Drains an async iterable (the store's read) into an array. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
