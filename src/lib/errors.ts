/** What any layer says about an error it caught: `throw` can throw anything, not only an Error. */

/** The errno code of a Node system error (`ENOENT`, `EPERM`…), or undefined for anything else. */
export function errnoCode(e: unknown): string | undefined {
  return typeof e === 'object' && e !== null && 'code' in e ? String(e.code) : undefined;
}

/** An error's message, or the thrown value as text. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
