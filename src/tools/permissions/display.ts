/**
 * What the person asked to approve a call sees. The model chose the input, so it is shown whole
 * (a command cut at 200 characters could hide `; rm -rf ~` after a harmless start) and with
 * every character that could change what the terminal shows escaped: C0/C1 controls (ANSI
 * sequences can erase a line or rewrite the prompt), and Unicode bidirectional overrides and
 * isolates, which reorder what is displayed ("Trojan Source"). `printable` (src/lib/printable.ts)
 * is the one escaper every CLI line goes through too.
 */
import { printable } from '../../lib/printable.ts';

/** The question put to the person: the tool and its whole input, printable. */
export function approvalQuestion(tool: string, input: unknown, why?: string): string {
  let shown: string;
  const command =
    typeof input === 'object' && input !== null ? (input as Record<string, unknown>).command : undefined;
  if (tool === 'Bash' && typeof command === 'string') {
    const rest = { ...(input as Record<string, unknown>) };
    delete rest.command;
    shown = `${printable(command)}${Object.keys(rest).length ? `  ${printable(JSON.stringify(rest))}` : ''}`;
  } else {
    shown = printable(JSON.stringify(input) ?? String(input));
  }
  return `Allow ${tool}: ${shown}${why ? `\n  (${printable(why)})` : ''}`;
}
