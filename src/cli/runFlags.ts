import type { Command } from 'commander';

const collect = (v: string, prev: string[]) => [...prev, v];

/** The flags that say how a run runs: shared by `reloop run` and `reloop submit`. */
export function withRunFlags(cmd: Command): Command {
  return cmd
    .option(
      '--model <name>',
      'Anthropic model name (needs ANTHROPIC_API_KEY; ANTHROPIC_BASE_URL is honoured)',
    )
    .option('--script <file>', 'answer from a JSON script instead of a model (see docs/script-format.md)')
    .option('--cwd <dir>', 'working directory of the tools (default: current directory)')
    .option('--max-turns <n>', 'tool rounds before the run stops (max_turns_reached)')
    .option('--max-budget-usd <usd>', 'stop when the run has cost more than this (budget_exhausted)')
    .option('--permission-mode <mode>', 'default | acceptEdits | bypassPermissions | plan', 'default')
    .option(
      '--allow <rule>',
      'allow rule, e.g. "Bash(npm test:*)" or "Edit(src/**)" (repeatable)',
      collect,
      [],
    )
    .option('--deny <rule>', 'deny rule (repeatable)', collect, [])
    .option('--stop-hook <command>', 'command run when the model wants to stop (repeatable)', collect, [])
    .option('--settings <file>', 'Claude-Code-style settings JSON with hooks (PreToolUse, Stop)')
    .option('--fallback-model <name>', 'model to switch to after repeated overloads (529)')
    .option(
      '--pass-env <name>',
      'let Bash and hooks see this secret variable (withheld by default; see docs/security.md) (repeatable)',
      collect,
      [],
    );
}
