import path from 'node:path';

/** Where a store is: a directory (the file store) or a PostgreSQL URL. */
export type StoreLocation = { kind: 'file'; dir: string } | { kind: 'postgres'; url: string };

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** A `postgres://` (or `postgresql://`) URL names a PostgreSQL store; anything else is a directory. */
export function storeLocation(raw: string, cwd: string = process.cwd()): StoreLocation {
  return POSTGRES_URL.test(raw)
    ? { kind: 'postgres', url: raw }
    : { kind: 'file', dir: path.resolve(cwd, raw) };
}
