/**
 * Shared workload of the micro-benchmarks: the ten records one agent tool round writes (noop tool,
 * scripted model), shaped like the records the runtime writes in bench/loop.ts, plus a tiny timer.
 */
import { resolveRunConfig } from '../../src/runtime/config.ts';
import {
  CURRENT_SCHEMA_VERSION,
  type LogRecord,
  type RecordData,
  type RecordType,
} from '../../src/store/records.ts';

export const SESSION = 'bench-s1';
export const RUN = 'bench-r1';

export class RoundStream {
  seq = 0;
  at = 1_700_000_000_000;

  rec<T extends RecordType>(type: T, data: RecordData<T>, run: string | null = RUN): LogRecord {
    return {
      v: CURRENT_SCHEMA_VERSION,
      seq: ++this.seq,
      at: ++this.at,
      session: SESSION,
      run,
      type,
      data,
    } as LogRecord;
  }

  /** session.created, run.started, user.message, as a session begins. */
  start(): LogRecord[] {
    return [
      this.rec('session.created', { title: 'bench', cwd: '/tmp/bench' }, null),
      this.rec('run.started', { config: resolveRunConfig(), autoCompactFailures: 0 }),
      this.rec('user.message', { message: { role: 'user', content: 'go' } }),
    ];
  }

  /** The ten records of tool round `i`. */
  round(i: number): LogRecord[] {
    const id = `t${i}`;
    const usage = {
      inputTokens: 10,
      outputTokens: 5,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      costUsd: 0.000105,
    };
    const content = [{ type: 'tool_use' as const, id, name: 'noop', input: { n: i } }];
    return [
      this.rec('transition', {
        from: 'building',
        to: 'requesting',
        trigger: 'xstate.done.actor.buildQuery',
        reason: 'query_built',
      }),
      this.rec('model.requested', {
        purpose: 'turn',
        model: 'claude-sonnet-4-6',
        maxTokens: 8192,
        messageCount: 1 + 2 * i,
        attempt: 1,
      }),
      this.rec('model.responded', {
        purpose: 'turn',
        response: { id: `msg_${i}`, model: 'claude-sonnet-4-6', content, stopReason: 'tool_use', usage },
      }),
      this.rec('transition', {
        from: 'requesting',
        to: 'dispatchingTools',
        trigger: 'xstate.done.actor.callModel',
        reason: 'tool_use_requested',
      }),
      this.rec('message.appended', { message: { role: 'assistant', content }, origin: 'assistant' }),
      this.rec('permission.decided', {
        toolUseId: id,
        name: 'noop',
        decision: 'allow',
        resolved: 'allow',
        by: 'default',
      }),
      this.rec('tool.started', { toolUseId: id, name: 'noop', input: { n: i }, index: 0, readOnly: true }),
      this.rec('tool.finished', {
        toolUseId: id,
        name: 'noop',
        index: 0,
        outcome: 'ok',
        result: { content: 'ok', isError: false },
        durationMs: 0.01,
      }),
      this.rec('transition', {
        from: 'dispatchingTools',
        to: 'building',
        trigger: 'xstate.done.actor.runTools',
        reason: 'tool_result_continuation',
      }),
      this.rec('message.appended', {
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] },
        origin: 'tool_results',
      }),
    ];
  }
}

/** `n` rounds after a session start, as one array. */
export function roundStream(rounds: number): LogRecord[] {
  const s = new RoundStream();
  const out = s.start();
  for (let i = 0; i < rounds; i++) out.push(...s.round(i));
  return out;
}

/** Runs `fn` (which does `ops` operations) `repeats` times after a warm-up; returns the median ns per op. */
export function medianNs(fn: () => void, ops: number, repeats = 15): { median: number; min: number } {
  for (let i = 0; i < 3; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / ops);
  }
  samples.sort((a, b) => a - b);
  return { median: samples[Math.floor(samples.length / 2)]!, min: samples[0]! };
}

export function fmt(ns: number): string {
  return ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`;
}
