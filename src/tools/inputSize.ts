/** Default cap on one tool call's input: far above what a model can write in one reply (~128k tokens). */
export const DEFAULT_MAX_TOOL_INPUT_BYTES = 1024 * 1024;

/**
 * Whether `value` serialises to more than `limit` bytes of JSON, found by walking it and stopping
 * as soon as the count passes the limit — a small input costs a few steps, a 30 MB one no more than
 * reaching the limit. Strings count their UTF-16 length (a lower bound of their UTF-8 bytes).
 */
export function inputExceeds(value: unknown, limit: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (v === null || typeof v !== 'object') size += 8;
    else if (Array.isArray(v)) {
      size += 2 + v.length;
      for (const x of v) stack.push(x);
    } else {
      for (const [k, x] of Object.entries(v)) {
        size += k.length + 4;
        stack.push(x);
      }
    }
    if (size > limit) return true;
  }
  return false;
}

export function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(n / 1024)} KB`;
}
