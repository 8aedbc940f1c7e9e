import { z } from 'zod';
import { BackgroundShells, SHELL_MAX_READ_CHARS, type ShellRead } from '../backgroundShells.ts';
import type { Tool, ToolContext } from '../types.ts';
import { toolError } from './common.ts';

export const BashOutputInput = z.object({
  bash_id: z.string().min(1).describe('The ID of the background shell to retrieve output from'),
  filter: z
    .string()
    .optional()
    .describe(
      'Optional regular expression: only output lines that match it are shown. Lines that do not match are no longer available to read.',
    ),
});
export type BashOutputInput = z.infer<typeof BashOutputInput>;

export const KillShellInput = z.object({
  shell_id: z.string().min(1).describe('The ID of the background shell to kill'),
});
export type KillShellInput = z.infer<typeof KillShellInput>;

const outputDescription = `Retrieves output from a running or completed background bash shell (started with Bash run_in_background).

- Takes the shell id (bash_id) the Bash call returned.
- Returns only the output that is new since the last BashOutput call for that shell, stdout and stderr apart, with the shell's status (running, completed, failed, killed) and its exit code once it exited.
- At most ${SHELL_MAX_READ_CHARS} characters per stream per call; the rest waits for the next call.
- filter: a regular expression; only matching lines are returned, and the others are gone.
- Background shells belong to the run that started them: they are killed when it ends.`;

const killDescription = `Kills a running background bash shell (started with Bash run_in_background) by its ID, with every process it started.

- Takes shell_id, the id the Bash call returned.
- Returns whether it was killed; a shell that already exited is reported as such.`;

/** A shell id this run does not have: gone with an earlier run, or never started. */
function unknownShell(ctx: ToolContext, id: string): string {
  const known = ctx.run ? BackgroundShells.of(ctx.run).ids() : [];
  return (
    `No background shell ${JSON.stringify(id)} in this run. Background shells belong to the run that ` +
    'started them and end with it (or with its process: after a crash and resume they are gone); ' +
    `start the command again with run_in_background if it is still needed. ${
      known.length ? `Shells of this run: ${known.join(', ')}.` : 'This run has started none.'
    }`
  );
}

function section(name: string, part: ShellRead['stdout']): string {
  const lines: string[] = [];
  if (part.dropped > 0)
    lines.push(`[${part.dropped} earlier characters were dropped: too much output was left unread]`);
  if (part.text !== '') lines.push(part.text.replace(/\n$/, ''));
  if (part.more > 0) lines.push(`[${part.more} more characters waiting: call BashOutput again]`);
  return `<${name}>\n${lines.join('\n')}${lines.length ? '\n' : ''}</${name}>`;
}

function render(r: ShellRead): string {
  const parts = [`<shell_id>${r.id}</shell_id>`, `<status>${r.status}</status>`];
  if (r.exitCode !== null) parts.push(`<exit_code>${r.exitCode}</exit_code>`);
  else if (r.signal) parts.push(`<signal>${r.signal}</signal>`);
  parts.push(section('stdout', r.stdout), section('stderr', r.stderr));
  return parts.join('\n\n');
}

export function bashOutputTool(): Tool<BashOutputInput> {
  return {
    name: 'BashOutput',
    description: outputDescription,
    inputSchema: BashOutputInput,
    // It only reads what a shell of this run printed; re-run after a crash it finds no shell.
    isReadOnly: true,
    isConcurrencySafe: () => true,
    async call(input, ctx) {
      let filter: RegExp | undefined;
      if (input.filter !== undefined) {
        try {
          filter = new RegExp(input.filter);
        } catch (e) {
          return toolError(`Invalid filter regular expression: ${(e as Error).message}`);
        }
      }
      const shell = ctx.run ? BackgroundShells.of(ctx.run).get(input.bash_id) : undefined;
      if (!shell) return toolError(unknownShell(ctx, input.bash_id));
      return { content: render(shell.read(filter)) };
    },
  };
}

export function killShellTool(): Tool<KillShellInput> {
  return {
    name: 'KillShell',
    description: killDescription,
    inputSchema: KillShellInput,
    // It can only end a process group this run started itself (see BackgroundShells).
    isReadOnly: true,
    isConcurrencySafe: () => false,
    async call(input, ctx) {
      const shell = ctx.run ? BackgroundShells.of(ctx.run).get(input.shell_id) : undefined;
      if (!shell) return toolError(unknownShell(ctx, input.shell_id));
      if (shell.status !== 'running') {
        return {
          content: `Shell ${shell.id} is not running (${shell.status}${shell.killReason ? `: ${shell.killReason}` : ''}); nothing to kill.`,
        };
      }
      await shell.kill('killed by KillShell');
      return { content: `Killed shell ${shell.id} (${shell.command}) and every process it started.` };
    },
  };
}
