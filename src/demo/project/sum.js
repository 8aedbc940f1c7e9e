// A tiny library with a bug for the reloop demo to fix.
export function sum(a, b) {
  return a - b;
}
