import type { Command } from 'commander';
import { type GlobalOptions, openStore, out, printJson, storeLocationOf, withCommonOptions } from '../io.ts';

/** `reloop store init`: creates the store, or brings a PostgreSQL store's schema up to date. */
export function registerStore(program: Command): void {
  const store = program.command('store').description('set up a store');
  withCommonOptions(
    store
      .command('init')
      .description(
        "create the store (a directory, or reloop's schema in a PostgreSQL database) or migrate it to this version",
      ),
  ).action(async (opts: GlobalOptions) => {
    const location = storeLocationOf(opts);
    if (location.kind === 'file') {
      // As `run` makes it: a directory that cannot be made fails at once (STORE_UNUSABLE).
      await (await openStore(opts, { create: true })).close();
      if (opts.json) return printJson({ kind: 'file', dir: location.dir });
      return out(`file store at ${location.dir}`);
    }
    const { openPostgresStore, migrate, redactUrl } = await import('../../store/postgres/index.ts');
    const pgStore = await openPostgresStore(location.url, { migrate: false });
    try {
      const client = await pgStore.pool.connect();
      try {
        const { from, to } = await migrate(client);
        if (opts.json) return printJson({ kind: 'postgres', url: redactUrl(location.url), from, to });
        out(
          from === to
            ? `PostgreSQL store ${redactUrl(location.url)}: schema version ${to}, up to date`
            : `PostgreSQL store ${redactUrl(location.url)}: schema version ${from} → ${to}`,
        );
      } finally {
        client.release();
      }
    } finally {
      await pgStore.close();
    }
  });
}
