import type { Command } from 'commander';
import {
  CommandFailed,
  type GlobalOptions,
  intOption,
  openStore,
  out,
  printJson,
  selfCommand,
  UsageError,
  withCommonOptions,
} from '../io.ts';

interface ForkOptions extends GlobalOptions {
  at?: string;
  response?: string;
  toolResult?: string;
}

/** `<toolUseId>=<file>`, split at the first `=` (a file name may hold one, a tool_use id does not). */
export function parseToolResultFlag(value: string): { toolUseId: string; file: string } {
  const eq = value.indexOf('=');
  if (eq <= 0 || eq === value.length - 1)
    throw new UsageError(`--tool-result takes <toolUseId>=<file>, got ${JSON.stringify(value)}`);
  return { toolUseId: value.slice(0, eq), file: value.slice(eq + 1) };
}

async function readInput(file: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'ENOENT') throw new CommandFailed(`no such file: ${file}`, 1, 'ENOENT');
    throw new CommandFailed(
      `${file}: ${(e as Error).message}`,
      1,
      typeof code === 'string' ? code : undefined,
    );
  }
}

export function registerFork(program: Command): void {
  withCommonOptions(
    program
      .command('fork <session>')
      .description(
        'start a new session from a prefix of another one (the original is untouched); with --response or --tool-result, a counterfactual fork',
      )
      .option(
        '--at <seq>',
        'last record of the source to keep; with --response, the model.responded record to replace',
      )
      .option(
        '--response <file.json>',
        'replace the model response at --at with this one (a script response turn or a logged response) and continue from it',
      )
      .option(
        '--tool-result <toolUseId>=<file>',
        "replace that tool call's result with the file's text (a .json file: { content, is_error? }) and continue from it",
      ),
  ).action(async (session: string, opts: ForkOptions) => {
    const at = opts.at === undefined ? undefined : intOption('--at', opts.at);
    if (opts.at !== undefined && (at === undefined || at < 1)) throw new UsageError('--at must be a seq ≥ 1');
    if (opts.response !== undefined && opts.toolResult !== undefined)
      throw new UsageError('--response and --tool-result replace one record each: give one of them');
    if (at === undefined && opts.toolResult === undefined)
      throw new UsageError(
        opts.response !== undefined
          ? '--response needs --at <seq>: the model.responded record to replace'
          : "required option '--at <seq>' not specified",
      );
    const toolResult = opts.toolResult !== undefined ? parseToolResultFlag(opts.toolResult) : undefined;
    const responseText = opts.response !== undefined ? await readInput(opts.response) : undefined;
    const toolResultText = toolResult ? await readInput(toolResult.file) : undefined;
    const fork = await import('../../replay/fork.ts');
    const store = await openStore(opts);
    try {
      if (responseText === undefined && toolResult === undefined) {
        const sessionId = await fork.forkSession(store, session, at!);
        if (opts.json) printJson({ sessionId });
        else
          out(
            `forked ${session}@${at} → ${sessionId}`,
            `continue it with: ${selfCommand()} run --resume ${sessionId} "<prompt>"`,
          );
        return;
      }
      const { parseResponseFile, parseToolResultFile } = await import('../../replay/replacement.ts');
      let replacement: import('../../replay/fork.ts').ForkReplacement;
      if (responseText !== undefined) {
        const { loadRecords } = await import('../../replay/loadSession.ts');
        // The model that answered stays the one named; a script turn's usage is priced for it.
        const records = await loadRecords(store, session);
        const old = records.find((r) => r.seq === at);
        const model = old?.type === 'model.responded' ? old.data.response.model : 'unknown';
        replacement = {
          response: parseResponseFile(responseText, opts.response!, { id: `msg_fork_${at}`, model }),
        };
      } else {
        replacement = {
          toolUseId: toolResult!.toolUseId,
          toolResult: parseToolResultFile(toolResultText!, toolResult!.file),
        };
      }
      const made = await fork.forkWithReplacement(store, session, replacement, at);
      const what =
        made.type === 'model.responded' ? 'the response' : `the result of ${toolResult!.toolUseId}`;
      if (opts.json) printJson(made);
      else
        out(
          `forked ${session} with ${what} at seq ${made.replacedSeq} replaced → ${made.sessionId} (waits in ${made.state})`,
          made.toolsPending
            ? `continue it with: ${selfCommand()} run --resume ${made.sessionId}   (the new response's tool calls run first)`
            : `continue it with: ${selfCommand()} run --resume ${made.sessionId} ["<prompt>"]`,
        );
    } finally {
      await store.close();
    }
  });
}
