import path from 'node:path';
import { type FileStoreOptions, openFileStore } from './fileStore.ts';
import type { EventStore } from './types.ts';

export type StoreLocation = { kind: 'file'; dir: string } | { kind: 'postgres'; url: string };

export interface OpenStoreOptions extends FileStoreOptions {
  /** PostgreSQL: create or migrate the schema when needed (default true). */
  migrate?: boolean;
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** A `postgres://` (or `postgresql://`) URL names a PostgreSQL store; anything else is a directory. */
export function storeLocation(raw: string, cwd: string = process.cwd()): StoreLocation {
  return POSTGRES_URL.test(raw)
    ? { kind: 'postgres', url: raw }
    : { kind: 'file', dir: path.resolve(cwd, raw) };
}

/**
 * The store a location names. The PostgreSQL store (and its driver) is loaded only when asked
 * for, so file-store users never load `pg`.
 */
export async function openStore(
  location: StoreLocation,
  options: OpenStoreOptions = {},
): Promise<EventStore> {
  if (location.kind === 'file') return openFileStore(location.dir, options);
  const { openPostgresStore } = await import('./postgres/index.ts');
  return openPostgresStore(location.url, { migrate: options.migrate });
}
