/**
 * Whether two JSON values (what a record holds: objects, arrays, strings, numbers, booleans, null)
 * are equal, key order aside. For the hot path of the writer, where node:util's isDeepStrictEqual
 * costs ~10× more on the small inputs it sees every tool call. Pairs still to compare are kept on
 * an explicit stack, not the call stack: a model decides how deep a tool input nests.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  const pending: unknown[] = [a, b];
  while (pending.length > 0) {
    const y = pending.pop();
    const x = pending.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) pending.push(x[i], y[i]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const p = x as Record<string, unknown>;
    const q = y as Record<string, unknown>;
    let n = 0;
    for (const k in p) {
      if (!Object.hasOwn(p, k) || p[k] === undefined) continue;
      if (!Object.hasOwn(q, k)) return false;
      pending.push(p[k], q[k]);
      n++;
    }
    for (const k in q) if (Object.hasOwn(q, k) && q[k] !== undefined) n--;
    if (n !== 0) return false;
  }
  return true;
}
