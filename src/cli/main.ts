import { Command, CommanderError } from 'commander';
import { packageVersion } from '../lib/version.ts';
import { registerApprovals } from './commands/approvals.ts';
import { registerChat } from './commands/chat.ts';
import { registerCopy } from './commands/copy.ts';
import { registerCoverage } from './commands/coverage.ts';
import { registerExport } from './commands/export.ts';
import { registerFork } from './commands/fork.ts';
import { registerImport } from './commands/import.ts';
import { registerLog } from './commands/log.ts';
import { registerPaths } from './commands/paths.ts';
import { registerReplay } from './commands/replay.ts';
import { registerRun } from './commands/run.ts';
import { registerServe } from './commands/serve.ts';
import { registerSessions } from './commands/sessions.ts';
import { registerStore } from './commands/store.ts';
import { registerSubmit } from './commands/submit.ts';
import { registerViz } from './commands/viz.ts';
import { registerWorker } from './commands/worker.ts';
import { CommandFailed, EXIT, err, hinted, UsageError } from './io.ts';

/**
 * The `reloop` command line. Each command lives in its own file under ./commands and
 * registers itself on the program; this file only wires them and maps errors to exit codes.
 * Registering loads nothing heavy: every action imports what it needs when it runs, so
 * `reloop --help` costs commander and these files, not the runtime.
 */
const program = new Command()
  .name('reloop')
  .description(
    'Event-sourced runtime for coding agents: run, inspect, replay and test the query-loop statechart.',
  )
  .version(packageVersion(), '-V, --version', 'print the version')
  .configureOutput({
    // Parser errors read like every other error: one line, `reloop: …`, with a code.
    outputError: (text) => err(`reloop: ${text.replace(/^error: /, '').trimEnd()} [USAGE]`),
  })
  .exitOverride();

const commands: ((p: Command) => void)[] = [
  // one line per command module
  registerRun,
  registerChat,
  registerSessions,
  registerLog,
  registerReplay,
  registerFork,
  registerViz,
  registerCoverage,
  registerPaths,
  registerStore,
  registerSubmit,
  registerWorker,
  registerApprovals,
  registerCopy,
  registerServe,
  registerImport,
  registerExport,
];

for (const register of commands) register(program);

// A reader that goes away (`reloop log … | head`) is not an error: stop writing, keep going, so a
// run still ends properly and nothing is left half-done.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}

// `reloop` alone on a terminal is the interactive session; anywhere else it prints the help.
const argv =
  process.argv.length === 2 && process.stdin.isTTY && process.stdout.isTTY
    ? [...process.argv, 'chat']
    : process.argv;

try {
  await program.parseAsync(argv);
} catch (e) {
  process.exitCode = exitCodeOf(e);
}

/** The one exit-code mapping of every command (docs/cli.md, "Exit codes"). */
function exitCodeOf(e: unknown): number {
  if (e instanceof CommanderError) {
    if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version' || e.exitCode === 0)
      return EXIT.ok;
    return EXIT.usage;
  }
  if (e instanceof UsageError) {
    err(`reloop: ${hinted(e.message)} [${e.code}]`);
    return EXIT.usage;
  }
  if (e instanceof CommandFailed) {
    if (e.message) err(`reloop: ${hinted(e.message)}${e.code ? ` [${e.code}]` : ''}`);
    return e.exitCode;
  }
  const code = (e as { code?: unknown })?.code;
  err(
    `reloop: ${hinted(e instanceof Error ? e.message : String(e))}${typeof code === 'string' ? ` [${code}]` : ''}`,
  );
  return EXIT.failed;
}
