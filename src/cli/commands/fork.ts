import type { Command } from 'commander';
import {
  type GlobalOptions,
  intOption,
  openStore,
  out,
  printJson,
  selfCommand,
  UsageError,
  withCommonOptions,
} from '../io.ts';

export function registerFork(program: Command): void {
  withCommonOptions(
    program
      .command('fork <session>')
      .description('start a new session from a prefix of another one (the original is untouched)')
      .requiredOption('--at <seq>', 'last record of the source to keep'),
  ).action(async (session: string, opts: GlobalOptions & { at: string }) => {
    const at = intOption('--at', opts.at);
    if (at === undefined || at < 1) throw new UsageError('--at must be a seq ≥ 1');
    const { forkSession } = await import('../../replay/fork.ts');
    const store = await openStore(opts);
    try {
      const sessionId = await forkSession(store, session, at);
      if (opts.json) printJson({ sessionId });
      else
        out(
          `forked ${session}@${at} → ${sessionId}`,
          `continue it with: ${selfCommand()} run --resume ${sessionId} "<prompt>"`,
        );
    } finally {
      await store.close();
    }
  });
}
