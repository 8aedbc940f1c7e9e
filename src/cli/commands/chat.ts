import type { Command } from 'commander';
import { CommandFailed, EXIT, UsageError, withCommonOptions } from '../io.ts';
import { withRunFlags } from '../runFlags.ts';

/**
 * `reloop chat` (and `reloop` alone when stdin and stdout are a terminal): the interactive
 * session (src/cli/chat/). With stdin not a terminal it is one run of what stdin holds, as
 * `reloop run` would do it.
 */
export function registerChat(program: Command): void {
  withCommonOptions(
    withRunFlags(
      program
        .command('chat')
        .description(
          'an interactive session on the current directory: each prompt one run of the same session (Esc interrupts, Ctrl-D exits)',
        ),
    )
      .option('--resume [session]', 'continue a session (without an id: pick one of this directory)')
      .option('-c, --continue', 'continue the most recent session of this directory'),
  ).action(async (opts: import('../chat/chat.ts').ChatOptions) => {
    if (opts.resume !== undefined && opts.continue)
      throw new UsageError('--resume and --continue both name the session to open: give one');
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      process.exitCode = await oneShot(opts);
      return;
    }
    const { hasApiKey } = await import('../../model/credentials.ts');
    if (!opts.script && !hasApiKey())
      throw new CommandFailed(
        `no model to talk to: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for any server that speaks the Messages API), or pass --script <file.json> to answer from a script (docs/chat.md)`,
        EXIT.usage,
        'NO_MODEL',
      );
    const { runChat } = await import('../chat/chat.ts');
    process.exitCode = await runChat(opts);
  });
}

/** stdin is not a terminal: its text is one prompt, run as `reloop run` runs it (`-c`/`--resume <id>` honoured). */
async function oneShot(opts: import('../chat/chat.ts').ChatOptions): Promise<number> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const prompt = Buffer.concat(chunks).toString('utf8').trim();
  if (opts.resume === true)
    throw new UsageError('--resume without an id needs a terminal to pick from: give the session id');
  const { prepareRun, runPrepared } = await import('../runSession.ts');
  const { openStore } = await import('../io.ts');
  let resume = typeof opts.resume === 'string' ? opts.resume : undefined;
  const { continue: _c, resume: _r, ...rest } = opts;
  const prepared = await prepareRun({ ...rest });
  const store = await openStore(opts, { create: true });
  try {
    if (opts.continue) {
      const { sessionsOf } = await import('../chat/pickSession.ts');
      resume = (await sessionsOf(store, prepared.cwd))[0]?.id;
    }
    if (!prompt && !resume) throw new UsageError('stdin held no prompt (and no session to continue)');
    const result = await runPrepared(store, prompt || null, prepared, {
      ...rest,
      ...(resume ? { resume } : {}),
    });
    return result.status === 'completed' ? EXIT.ok : result.status === 'paused' ? EXIT.paused : EXIT.failed;
  } finally {
    await store.close();
  }
}
