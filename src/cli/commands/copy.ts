import type { Command } from 'commander';
import { CommandFailed, EXIT, type GlobalOptions, openStore, out, printJson, UsageError } from '../io.ts';

interface CopyFlags extends Pick<GlobalOptions, 'json'> {
  from?: string;
  to?: string;
  session: string[];
}

const collect = (v: string, prev: string[]) => [...prev, v];

/** `reloop copy --from <store> --to <store>`: sessions between stores, each copy verified. */
export function registerCopy(program: Command): void {
  program
    .command('copy')
    .description(
      'copy sessions between stores (a directory or postgres:// URL each), verifying every copied log',
    )
    .requiredOption('--from <store>', 'the store to read')
    .requiredOption('--to <store>', 'the store to write')
    .option('--session <id>', 'copy only this session (repeatable; default: every session)', collect, [])
    .option('--json', 'one JSON report per session, one per line')
    .action(async (opts: CopyFlags) => {
      if (opts.from === opts.to) throw new UsageError('--from and --to name the same store');
      const from = await openStore({ store: opts.from }, { flag: '--from' });
      try {
        // The target is made if it does not exist yet (a directory; a database gets reloop's schema).
        const to = await openStore({ store: opts.to }, { create: true, flag: '--to' });
        try {
          const { copySession } = await import('../../replay/copySession.ts');
          const ids = opts.session.length > 0 ? opts.session : (await from.list()).map((s) => s.id).reverse();
          let bad = 0;
          for (const id of ids) {
            const r = await copySession(from, to, id);
            if (r.outcome === 'failed' || !r.verified) bad++;
            if (opts.json) printJson(r);
            else if (r.outcome === 'failed') out(`${id}  failed: ${r.error}`);
            else
              out(
                `${id}  ${r.outcome === 'copied' ? `copied ${r.appended} of ${r.records} records` : `already there (${r.records} records)`}, ${r.verified ? 'verified' : `does NOT verify: ${r.divergence?.detail ?? ''}`}`,
              );
          }
          if (bad > 0)
            throw new CommandFailed(
              `${bad} of ${ids.length} sessions were not copied and verified`,
              EXIT.failed,
              'COPY_FAILED',
            );
        } finally {
          await to.close();
        }
      } finally {
        await from.close();
      }
    });
}
