import type { FileStoreOptions } from './fileStore.ts';
import type { StoreLocation } from './storeLocation.ts';
import type { EventStore } from './types.ts';

export { type StoreLocation, storeLocation } from './storeLocation.ts';

export interface OpenStoreOptions extends FileStoreOptions {
  /** PostgreSQL: create or migrate the schema when needed (default true). */
  migrate?: boolean;
}

/**
 * The store a location names. Each store (and the PostgreSQL driver) is loaded only when asked
 * for: file-store users never load `pg`, and nobody loads a store before a command needs one.
 */
export async function openStore(
  location: StoreLocation,
  options: OpenStoreOptions = {},
): Promise<EventStore> {
  if (location.kind === 'file') {
    const { openFileStore } = await import('./fileStore.ts');
    return openFileStore(location.dir, options);
  }
  const { openPostgresStore } = await import('./postgres/index.ts');
  return openPostgresStore(location.url, { migrate: options.migrate });
}
