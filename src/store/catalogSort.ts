import type { SessionInfo } from './types.ts';

/** Newest first, the order people look for sessions in. */
export function catalogSorted(rows: SessionInfo[]): SessionInfo[] {
  return rows.sort((a, b) => b.updated - a.updated || a.id.localeCompare(b.id));
}
