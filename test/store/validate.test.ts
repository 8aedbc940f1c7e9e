import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { InvalidRecordError, SchemaVersionError } from '../../src/store/errors.ts';
import { type LogRecord, LogRecordSchema, SUPPORTED_SCHEMA_VERSIONS } from '../../src/store/records.ts';
import { type RecordLocation, validateRecord } from '../../src/store/validate.ts';
import { RUN_CONFIG } from './support/records.ts';

/**
 * validateRecord parses with per-type compiled schemas; these tests hold it to the plain zod
 * union it replaced: the same records accepted, the same output (down to key order and dropped
 * keys), the same errors word for word. The reference below is the former implementation.
 */
function reference(raw: unknown, where: RecordLocation = {}): LogRecord {
  const seq = typeof raw === 'object' && raw !== null ? (raw as { seq?: unknown }).seq : undefined;
  const at = { ...where, seq: typeof seq === 'number' ? seq : undefined };
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new InvalidRecordError(at, 'not a JSON object');
  }
  const v = (raw as { v?: unknown }).v;
  if (typeof v !== 'number' || !SUPPORTED_SCHEMA_VERSIONS.includes(v)) {
    throw new SchemaVersionError(at, v, SUPPORTED_SCHEMA_VERSIONS);
  }
  const parsed = LogRecordSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.length ? issue.path.join('.') : '(record)';
    const type = (raw as { type?: unknown }).type;
    throw new InvalidRecordError(at, `${JSON.stringify(type)} ${path}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data;
}

type Outcome =
  | { ok: true; json: string; value: unknown }
  | { ok: false; name: string; message: string; where: unknown };

function outcome(f: (raw: unknown, where: RecordLocation) => LogRecord, raw: unknown): Outcome {
  try {
    const value = f(raw, { session: 's1', line: 7 });
    return { ok: true, json: JSON.stringify(value), value };
  } catch (e) {
    const err = e as InvalidRecordError;
    return { ok: false, name: err.name, message: err.message, where: err.where };
  }
}

function expectSame(raw: unknown): Outcome {
  const want = outcome(reference, raw);
  const got = outcome(validateRecord, raw);
  expect(got).toStrictEqual(want);
  if (got.ok) expect(got.value).not.toBe(raw);
  return got;
}

const dir = new URL('../fixtures/logs/', import.meta.url);
const golden: unknown[] = readdirSync(dir)
  .filter((f) => f.endsWith('.jsonl'))
  .flatMap((f) =>
    readFileSync(new URL(f, dir), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line)),
  );

const env = { v: 1, seq: 5, at: 1_700_000_000_000, session: 's1', run: 'r1' };
const usage = {
  inputTokens: 3,
  outputTokens: 4,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 1,
  costUsd: 0.5,
};
/** At least one record of every type, with the optional and rarer fields present. */
const samples: unknown[] = [
  {
    ...env,
    run: null,
    type: 'session.created',
    data: { title: 't', cwd: '/x', forkedFrom: { session: 'a', seq: 0 } },
  },
  {
    ...env,
    type: 'run.started',
    data: { config: { ...RUN_CONFIG, system: 's' }, resumedFrom: 'r0', autoCompactFailures: 1 },
  },
  { ...env, type: 'user.message', data: { message: { role: 'user', content: 'hi' } } },
  {
    ...env,
    type: 'message.appended',
    data: {
      origin: 'assistant',
      message: {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'hm', signature: 'sig' },
          { type: 'redacted_thinking', data: 'xx' },
          { type: 'text', text: 'a' },
          { type: 'tool_use', id: 't1', name: 'Read', input: { path: 'a', deep: { x: [1, 2] } } },
          { type: 'server_tool_use', id: 'srv', extra: { kept: true } },
          { type: 'image', source: { type: 'base64', data: 'AA' } },
        ],
      },
    },
  },
  {
    ...env,
    type: 'message.appended',
    data: {
      origin: 'tool_results',
      message: {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't1', content: 'x', is_error: true },
          {
            type: 'tool_result',
            tool_use_id: 't2',
            content: [
              { type: 'text', text: 'a' },
              { type: 'image', source: {} },
            ],
          },
        ],
      },
    },
  },
  {
    ...env,
    type: 'model.requested',
    data: { purpose: 'turn', model: 'm', maxTokens: 8, messageCount: 0, attempt: 1 },
  },
  {
    ...env,
    type: 'model.responded',
    data: {
      purpose: 'compaction',
      response: { id: 'm', model: 'x', content: [{ type: 'text', text: 'a' }], stopReason: null, usage },
    },
  },
  {
    ...env,
    type: 'model.failed',
    data: {
      purpose: 'turn',
      failure: {
        kind: 'prompt_too_long',
        overloaded: false,
        status: 400,
        errorType: 'invalid_request_error',
        message: 'too long',
        retryAfterMs: 10,
        promptTokens: 3,
        maxPromptTokens: 2,
      },
    },
  },
  { ...env, type: 'backoff.scheduled', data: { attempt: 2, delayMs: 1.5, retryAfterMs: 0 } },
  {
    ...env,
    type: 'tool.started',
    data: { toolUseId: 't1', name: 'Read', input: undefined, index: 0, readOnly: true },
  },
  {
    ...env,
    type: 'tool.finished',
    data: {
      toolUseId: 't1',
      name: 'Read',
      index: 0,
      outcome: 'interrupted',
      result: { content: [{ type: 'text', text: 'x', more: 1 }], isError: true },
      durationMs: 0,
      filesRead: [{ path: '/a', sha256: 'h', mtimeMs: 5 }],
      synthetic: true,
    },
  },
  {
    ...env,
    type: 'permission.decided',
    data: { toolUseId: 't', name: 'Bash', decision: 'ask', resolved: 'deny', by: 'user', message: 'no' },
  },
  {
    ...env,
    type: 'hook.decided',
    data: { hook: 'PreToolUse', decision: 'deny', reason: 'r', command: 'c', toolUseId: 't', durationMs: 2 },
  },
  {
    ...env,
    type: 'compaction.finished',
    data: {
      ok: true,
      mode: 'auto',
      summary: 's',
      messages: [{ role: 'user', content: 'summary' }],
      tokensBefore: 100,
      tokensAfter: 10,
    },
  },
  { ...env, type: 'compaction.finished', data: { ok: false, mode: 'reactive', error: 'boom' } },
  { ...env, type: 'abort.requested', data: { reason: 'user' } },
  { ...env, type: 'abort.requested', data: {} },
  { ...env, type: 'actor.failed', data: { actor: 'runTools', message: 'boom' } },
  { ...env, type: 'transition', data: { from: 'a', to: 'b', trigger: 'e', reason: 'r' } },
  {
    ...env,
    type: 'run.ended',
    data: {
      status: 'aborted',
      reason: 'interrupted',
      turns: 0,
      usage,
      error: 'e',
      interrupted: { state: 'dispatchingTools', inFlight: ['t1'] },
    },
  },
];

/** Every (path, value) pair inside a JSON-like value, objects and arrays included. */
function* paths(value: unknown, path: (string | number)[] = []): Generator<(string | number)[]> {
  if (path.length) yield path;
  if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* paths(v, [...path, i]);
  else if (typeof value === 'object' && value !== null)
    for (const [k, v] of Object.entries(value)) yield* paths(v, [...path, k]);
}

function edit(
  value: unknown,
  path: (string | number)[],
  change: (parent: Record<string | number, unknown>, key: string | number) => void,
): unknown {
  const copy = structuredClone(value);
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  change(parent, path[path.length - 1]!);
  return copy;
}

const REPLACEMENTS: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  Number.POSITIVE_INFINITY,
  Number.NaN,
  '',
  'x',
  true,
  [],
  {},
  [1],
  'text',
];

function firstOfEachType(records: unknown[]): unknown[] {
  const seen = new Map<unknown, unknown>();
  for (const r of records)
    if (!seen.has((r as { type: unknown }).type)) seen.set((r as { type: unknown }).type, r);
  return [...seen.values()];
}

/** Every record of `samples` and `golden` with one field deleted, replaced, or given a sibling. */
function* mutants(): Generator<unknown> {
  for (const record of [...samples, ...firstOfEachType(golden)]) {
    for (const path of paths(record)) {
      yield edit(record, path, (p, k) => {
        if (Array.isArray(p)) p.splice(Number(k), 1);
        else delete p[k];
      });
      for (const r of REPLACEMENTS) {
        yield edit(record, path, (p, k) => {
          p[k] = r;
        });
      }
      yield edit(record, path, (p, k) => {
        const v = p[k];
        if (typeof v === 'object' && v !== null && !Array.isArray(v))
          (v as Record<string, unknown>).extra = 1;
      });
    }
  }
}

describe('validateRecord', () => {
  it('accepts every golden record and every sample, returning what the union parser returns', () => {
    for (const raw of [...golden, ...samples]) expect(expectSame(raw).ok).toBe(true);
  });

  it('drops unknown keys and keeps loose blocks as the union parser does', () => {
    const raw = {
      ...(samples[3] as object),
      extra: 1,
      data: { ...(samples[3] as { data: object }).data, x: 2 },
    };
    const got = expectSame(raw);
    expect(got.ok && got.json).not.toContain('dropMe');
    expect(got.ok && got.json).toContain('"kept":true');
  });

  it('rejects and accepts exactly what the union parser does, with the same errors', () => {
    let rejected = 0;
    let checked = 0;
    for (const raw of mutants()) {
      if (!expectSame(raw).ok) rejected++;
      checked++;
    }
    expect(checked).toBeGreaterThan(3_000);
    expect(rejected).toBeGreaterThan(checked / 3);
  });

  it('words the errors it always did', () => {
    const err = outcome(validateRecord, { ...env, type: 'transition', data: { from: 'a', to: 42 } });
    expect(err).toMatchObject({
      ok: false,
      name: 'InvalidRecordError',
      where: { session: 's1', line: 7, seq: 5 },
    });
    expect(err.ok || err.message).toMatch(
      /^invalid record \(session s1, line 7, seq 5\): "transition" data\.to: /,
    );
    for (const raw of [
      null,
      [],
      'x',
      { ...env, type: 'session.exploded', data: {} },
      { ...env, type: 'constructor', data: {} },
      { ...env, type: 42, data: {} },
      { ...env, v: 2, type: 'transition' },
      { ...env, v: '1' },
      { ...env, seq: 'x', type: 'transition' },
      { ...env, type: 'transition' },
    ]) {
      expect(expectSame(raw).ok).toBe(false);
    }
  });
});
