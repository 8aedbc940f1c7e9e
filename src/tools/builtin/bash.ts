import { z } from 'zod';
import { childEnv } from '../../lib/secrets.ts';
import { BackgroundShells } from '../backgroundShells.ts';
import { runInProcessGroup } from '../processGroup.ts';
import type { Tool, ToolContext, ToolOutput } from '../types.ts';

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
export const BASH_MAX_OUTPUT_CHARS = 30_000;

export const BashInput = z.object({
  command: z.string().min(1).describe('The shell command to run (bash -c).'),
  timeout: z
    .number()
    .int()
    .positive()
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe(`Timeout in milliseconds (default ${BASH_DEFAULT_TIMEOUT_MS}, max ${BASH_MAX_TIMEOUT_MS}).`),
  description: z.string().optional().describe('A short description of what the command does (5–10 words).'),
  run_in_background: z
    .boolean()
    .optional()
    .describe('Run the command in the background; read its output later with BashOutput.'),
});
export type BashInput = z.infer<typeof BashInput>;

const description = `Runs a shell command with bash in the working directory and returns its combined stdout and stderr and its exit code.

- Each call is a fresh shell: cd, variables and aliases do not carry over. Use paths relative to the working directory.
- Default timeout ${BASH_DEFAULT_TIMEOUT_MS / 1000} s, at most ${BASH_MAX_TIMEOUT_MS / 1000} s (timeout, in ms). On timeout the command and everything it started are killed.
- stdin is empty: interactive prompts get end-of-file. Pass flags like --yes or -y where a tool asks.
- Output over ${BASH_MAX_OUTPUT_CHARS} characters keeps the beginning and the end; redirect to a file and Read or Grep it for more.
- Background jobs (cmd &) that keep writing to the output are killed when the command ends; redirect their output (cmd > log 2>&1 &) to keep them running.
- run_in_background: true starts the command and returns at once with a shell id; read its new output with BashOutput (bash_id) and stop it with KillShell (shell_id). It is killed when the run ends. No & needed.
- Prefer Read, Grep, Glob, Edit and Write over cat, grep, find, sed and echo for files.`;

export interface BashToolOptions {
  /** SIGTERM → SIGKILL grace when the process group is killed (tests shorten it). */
  killGraceMs?: number;
  maxOutputChars?: number;
  /**
   * Secret variables (src/lib/secrets.ts) the command may see after all; by default it gets the
   * environment without them. Their values are still redacted from the log.
   */
  passEnv?: readonly string[];
}

export function bashTool(opts: BashToolOptions = {}): Tool<BashInput> {
  return {
    name: 'Bash',
    description,
    inputSchema: BashInput,
    isReadOnly: false,
    isConcurrencySafe: () => false,
    // A backstop above the largest per-call timeout: the tool enforces its own, and kills the group.
    timeoutMs: BASH_MAX_TIMEOUT_MS + 30_000,
    async call(input, ctx) {
      if (input.run_in_background) return startInBackground(input, ctx, opts);
      const timeoutMs = Math.min(input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
      const r = await runInProcessGroup(input.command, {
        cwd: ctx.cwd,
        timeoutMs,
        signal: ctx.signal,
        maxOutputChars: opts.maxOutputChars ?? BASH_MAX_OUTPUT_CHARS,
        combineOutput: true,
        killGraceMs: opts.killGraceMs,
        env: childEnv(process.env, opts.passEnv),
      });
      if (r.spawnError) {
        // Node reports a missing cwd as "spawn bash ENOENT": name the directory so it can be told apart.
        return { content: `Could not start bash in ${ctx.cwd}: ${r.spawnError.message}`, isError: true };
      }
      const output = r.stdout.replace(/\s+$/, '');
      const body = output === '' ? '(no output)' : output;
      if (r.timedOut) {
        return {
          content: `${body}\n[Command timed out after ${timeoutMs / 1000} s; it and every process it started were killed.]`,
          isError: true,
        };
      }
      if (r.aborted) {
        return {
          content: `${body}\n[Command aborted; it and every process it started were killed.]`,
          isError: true,
        };
      }
      const notes: string[] = [];
      if (r.killedLingering) {
        notes.push(
          '[Background processes still holding the output open were killed when the command ended.]',
        );
      }
      if (r.exitCode !== null) notes.push(`[exit code: ${r.exitCode}]`);
      else notes.push(`[killed by signal ${r.signal ?? 'unknown'}]`);
      return { content: `${body}\n${notes.join('\n')}`, isError: r.exitCode !== 0 };
    },
  };
}

/** `run_in_background`: the shell belongs to the run (BackgroundShells), the call returns its id. */
function startInBackground(input: BashInput, ctx: ToolContext, opts: BashToolOptions): ToolOutput {
  if (!ctx.run) {
    return {
      content: 'run_in_background is not available here: no run owns this call (it was re-run on resume).',
      isError: true,
    };
  }
  const shell = BackgroundShells.of(ctx.run).start(ctx.toolUseId, input.command, {
    cwd: ctx.cwd,
    env: childEnv(process.env, opts.passEnv),
    killGraceMs: opts.killGraceMs,
  });
  return {
    content:
      `Command running in background with ID: ${shell.id}. Read its new output with BashOutput ` +
      `(bash_id "${shell.id}"), stop it with KillShell (shell_id "${shell.id}"); it is killed when this run ends.`,
  };
}
