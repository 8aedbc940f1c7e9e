/**
 * How deep JSON may nest where it comes from outside: a model's reply, a script, a transcript, a
 * hook's output, a log read back. Real tool inputs nest a handful of levels; JSON.stringify and
 * every recursive walk overflow the stack somewhere between 4 000 and 10 000 levels (a reply nested
 * 3 800 deep broke the log's numbering, one 5 000 deep crashed `run`). 512 is far above anything
 * real and far below the stack.
 */
export const MAX_JSON_DEPTH = 512;

/**
 * How deep a log record may nest: an input allowed at MAX_JSON_DEPTH sits a few levels down in
 * the records that carry it (`data.response.content[i].input`, a compaction's
 * `data.messages[j].content[i].input`), so records get that much room on top.
 */
export const MAX_RECORD_DEPTH = MAX_JSON_DEPTH + 32;

/** A value nested deeper than MAX_JSON_DEPTH: refused before it is stored or walked further. */
export class JsonTooDeepError extends Error {
  readonly code = 'JSON_TOO_DEEP';
  constructor(
    readonly what: string,
    readonly limit: number = MAX_JSON_DEPTH,
  ) {
    super(`${what} is nested deeper than ${limit} levels`);
    this.name = 'JsonTooDeepError';
  }
}

/**
 * Whether `value` nests more than `limit` arrays/objects deep (a scalar is 0 deep, `{}` 1, `[{}]`
 * 2). Checked with an explicit stack, never by recursion, and it stops as soon as it is past the
 * limit: the check itself cannot overflow, whatever it is given.
 */
export function nestedDeeperThan(value: unknown, limit: number = MAX_JSON_DEPTH): boolean {
  if (value === null || typeof value !== 'object') return false;
  const values: unknown[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop() as object;
    const depth = depths.pop() as number;
    if (depth > limit) return true;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const x = v[i];
        if (x !== null && typeof x === 'object') {
          values.push(x);
          depths.push(depth + 1);
        }
      }
    } else {
      for (const k in v) {
        const x = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object' && Object.hasOwn(v, k)) {
          values.push(x);
          depths.push(depth + 1);
        }
      }
    }
  }
  return false;
}

/** Throws JsonTooDeepError naming `what` when `value` nests deeper than `limit`. */
export function assertJsonDepth(value: unknown, what: string, limit: number = MAX_JSON_DEPTH): void {
  if (nestedDeeperThan(value, limit)) throw new JsonTooDeepError(what, limit);
}
