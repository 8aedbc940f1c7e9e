import type { Command } from 'commander';
import {
  CommandFailed,
  type GlobalOptions,
  intOption,
  openStore,
  out,
  printJson,
  storeLabel,
  withCommonOptions,
} from '../io.ts';

type ServeOptions = GlobalOptions & { port: string; host: string; auth: boolean };

export function registerServe(program: Command): void {
  withCommonOptions(
    program
      .command('serve')
      .description('serve the sessions of a store over HTTP: a sessions list and live session viewers')
      .option('--port <port>', 'port to listen on (0: any free port)', '4680')
      .option(
        '--host <host>',
        'address to listen on (anything but loopback exposes your sessions to the network)',
        '127.0.0.1',
      )
      .option(
        '--no-auth',
        'serve without the token (any local user, or anyone who can reach --host, reads every session)',
      ),
  ).action(async (opts: ServeOptions) => {
    const port = intOption('--port', opts.port);
    const store = await openStore(opts, { quiet: ['torn_tail'] });
    // Every store here has it today; a store chosen by URL (PostgreSQL) must have it too.
    if (typeof (store as { follow?: unknown }).follow !== 'function') {
      await store.close();
      throw new CommandFailed('this store cannot follow sessions (no EventStore.follow): serve needs it');
    }
    // The server pulls in the chart and the viewer: loaded only when this command runs.
    const { startViewerServer } = await import('../../serve/server.ts');
    const { newToken } = await import('../../serve/access.ts');
    const followable = store as typeof store & Required<Pick<typeof store, 'follow'>>;
    const served = await startViewerServer({
      store: followable,
      storeDir: storeLabel(opts),
      host: opts.host,
      port,
      token: opts.auth ? newToken() : null,
    }).catch(async (e: unknown) => {
      await store.close();
      throw e;
    });
    if (opts.json) printJson({ url: served.openUrl, token: served.token, store: storeLabel(opts) });
    else out(`serving ${storeLabel(opts)} at ${served.openUrl} (Ctrl-C to stop)`);
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await served.close();
    await store.close();
  });
}
