/**
 * Text a model chose, shown to a person on a terminal. A terminal interprets what it is sent:
 * C0 controls (`\r` rewrites the line, ESC starts CSI/OSC sequences that move the cursor, erase
 * a line, set the title or write the clipboard with OSC 52), DEL, C1 controls (U+009B is CSI on
 * terminals that take 8-bit controls), and Unicode format characters that reorder or hide what
 * is displayed (bidi overrides and isolates, "Trojan Source"; zero-width characters). Each of
 * these is written visibly escaped instead, never sent as it is: `\x1b`, `\r`, `\u202e`.
 *
 * A backslash is not escaped: a model can print the six characters `\x1b`, which look like an
 * escaped ESC and do nothing. Whoever needs the exact text reads `--json` (terminalJson below).
 * docs/security.md, "What reaches your terminal".
 */

// [from, to] code points. Built from numbers: a regex literal holding these characters would
// hide them in this file too.
const CONTROL_RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x1f], // C0, newline and tab included
  [0x7f, 0x9f], // DEL, C1
];
const FORMAT_RANGES: readonly (readonly [number, number])[] = [
  [0x061c, 0x061c], // arabic letter mark (bidi)
  [0x200b, 0x200f], // zero-width space/joiners, LRM, RLM
  [0x2028, 0x202e], // line/paragraph separators, LRE RLE PDF LRO RLO
  [0x2060, 0x2069], // word joiner, invisible operators, LRI RLI FSI PDI
  [0xfeff, 0xfeff], // zero-width no-break space (BOM)
];

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

// Every range is in the BMP, so no `u` flag (it makes every search over ordinary text slower).
function charClass(ranges: readonly (readonly [number, number])[], except = ''): RegExp {
  const body = ranges.map(([a, b]) => `\\u${hex(a, 4)}-\\u${hex(b, 4)}`).join('');
  // `except` is removed by lookahead, which keeps the ranges themselves simple.
  return new RegExp(`${except ? `(?![${except}])` : ''}[${body}]`, 'g');
}

const EVERY = charClass([...CONTROL_RANGES, ...FORMAT_RANGES]);
const BUT_LINES = charClass([...CONTROL_RANGES, ...FORMAT_RANGES], '\\n\\t');
// What JSON.stringify leaves as it is (it escapes C0 itself).
const JSON_UNESCAPED = charClass([[0x7f, 0x9f], ...FORMAT_RANGES]);

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escaped(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const n = c.charCodeAt(0);
  return n < 0x100 ? `\\x${hex(n, 2)}` : `\\u${hex(n, 4)}`;
}

/** `s` on one line: every control and format character escaped, newlines and tabs too. */
export function printable(s: string): string {
  return s.replace(EVERY, escaped);
}

/** `s` as lines of text: as `printable`, but newlines and tabs (which only move forward) kept. */
export function printableText(s: string): string {
  return s.replace(BUT_LINES, escaped);
}

/**
 * `JSON.stringify(value)` that is also safe on a terminal: JSON.stringify escapes C0 itself;
 * DEL, C1 and the format characters above become `\u` escapes too. These characters occur only
 * inside JSON strings, and a `\u` escape there parses back to the same character, so whoever
 * parses the line gets exactly the original text.
 */
export function terminalJson(value: unknown): string {
  const text = JSON.stringify(value) as string | undefined;
  return text === undefined
    ? String(text)
    : text.replace(JSON_UNESCAPED, (c) => `\\u${hex(c.charCodeAt(0), 4)}`);
}
