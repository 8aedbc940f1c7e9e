/**
 * Whether two JSON values (what a record holds: objects, arrays, strings, numbers, booleans, null)
 * are equal, key order aside. For the hot path of the writer, where node:util's isDeepStrictEqual
 * costs ~10× more on the small inputs it sees every tool call.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (!Object.hasOwn(x, k)) continue;
    if (x[k] === undefined) continue;
    if (!Object.hasOwn(y, k) || !sameJson(x[k], y[k])) return false;
    n++;
  }
  for (const k in y) if (Object.hasOwn(y, k) && y[k] !== undefined) n--;
  return n === 0;
}
