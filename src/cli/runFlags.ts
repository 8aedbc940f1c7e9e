import type { Command } from 'commander';
import { UsageError } from './io.ts';

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
    .option('--max-attempts <n>', 'attempts per model request, retries included (default 10)')
    .option('--max-budget-usd <usd>', 'stop when the run has cost more than this (budget_exhausted)')
    .option(
      '--permission-mode <mode>',
      "default | acceptEdits | bypassPermissions | plan | dontAsk (default: the settings' defaultMode, else default)",
    )
    .option(
      '--allow <rule>',
      'allow rule, e.g. "Bash(npm test:*)" or "Edit(src/**)" (repeatable)',
      collect,
      [],
    )
    .option('--deny <rule>', 'deny rule (repeatable)', collect, [])
    .option(
      '--allowedTools <rules>',
      'allow rules, Claude Code\'s flag: comma- or space-separated, e.g. "Bash(git log:*) Read" (repeatable)',
      collect,
      [],
    )
    .option('--disallowedTools <rules>', 'deny rules, comma- or space-separated (repeatable)', collect, [])
    .option(
      '--tools <list>',
      'which built-in tools exist at all: comma- or space-separated names, "" for none, "default" for all',
    )
    .option('--stop-hook <command>', 'command run when the model wants to stop (repeatable)', collect, [])
    .option(
      '--settings <file-or-json>',
      'one more settings file or JSON text (source flagSettings): permissions, hooks, MCP approvals',
    )
    .option(
      '--setting-sources <list>',
      'which settings files are read: comma-separated user, project, local (default all three; "" for none)',
    )
    .option(
      '--add-dir <dir>',
      'one more directory the file tools may reach besides --cwd (repeatable)',
      collect,
      [],
    )
    .option('--fallback-model <name>', 'model to switch to after repeated overloads (529)')
    .option(
      '--on-ask <park|deny>',
      'when the policy asks and nobody can answer (no terminal, --json, a worker): park the run for `reloop approve` (default) or deny the call',
      'park',
    )
    .option(
      '--pass-env <name>',
      'let Bash and hooks see this secret variable (withheld by default; see docs/security.md) (repeatable)',
      collect,
      [],
    )
    .option(
      '--agents-dir <dir>',
      'more sub-agent definitions (*.md, as .claude/agents) for the Task tool (repeatable)',
      collect,
      [],
    )
    .option('--subagent-max-turns <n>', "tool rounds of each sub-agent's run (default: --max-turns)")
    .option(
      '--mcp-config <file-or-json>',
      'MCP servers ({ "mcpServers": { … } }, as .mcp.json) from a file or a JSON string; approved by being given (repeatable)',
      collect,
      [],
    )
    .option('--strict-mcp-config', "only the --mcp-config servers: the project's .mcp.json is not read")
    .option('--system-prompt <text>', "the system prompt, instead of reloop's default")
    .option('--system-prompt-file <file>', 'the system prompt, read from a file')
    .option('--append-system-prompt <text>', 'text added to the end of the system prompt (default or given)')
    .option(
      '--append-system-prompt-file <file>',
      'text added to the end of the system prompt, read from a file',
    );
}

/** `--on-ask`: what an `ask` nobody can answer becomes. */
export function parseOnAsk(raw: string | undefined): 'park' | 'deny' {
  if (raw === undefined || raw === 'park' || raw === 'deny') return raw ?? 'park';
  throw new UsageError(`--on-ask must be park or deny, got ${JSON.stringify(raw)}`);
}
