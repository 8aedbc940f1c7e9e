/**
 * What the person asked to approve a call sees. The model chose the input, so it is shown whole
 * (a command cut at 200 characters could hide `; rm -rf ~` after a harmless start) and with
 * every character that could change what the terminal shows escaped: C0/C1 controls (ANSI
 * sequences can erase a line or rewrite the prompt), and Unicode bidirectional overrides and
 * isolates, which reorder what is displayed ("Trojan Source").
 */

// Built from code points: a regex literal with these characters would hide them in this file too.
const INVISIBLE = new RegExp(
  `[${[
    [0x00, 0x1f],
    [0x7f, 0x9f],
    [0x200b, 0x200f],
    [0x2028, 0x202e],
    [0x2060, 0x2069],
    [0xfeff, 0xfeff],
  ]
    .map(([a, b]) => `\\u{${(a as number).toString(16)}}-\\u{${(b as number).toString(16)}}`)
    .join('')}]`,
  'gu',
);

/** `s` with every control, bidi and zero-width character written as `\u{…}` (newlines and tabs too). */
export function printable(s: string): string {
  return s.replace(INVISIBLE, (c) => `\\u{${(c.codePointAt(0) as number).toString(16)}}`);
}

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
