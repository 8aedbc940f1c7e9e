/**
 * What must never reach a terminal raw from reloop's human output (src/lib/printable.ts): C0
 * controls other than newline and tab, DEL, C1 controls, and the bidi / zero-width format
 * characters. Built from code points, as in the source, so this file shows what it matches.
 */
const RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x08],
  [0x0b, 0x1f],
  [0x7f, 0x9f],
  [0x061c, 0x061c],
  [0x200b, 0x200f],
  [0x2028, 0x202e],
  [0x2060, 0x2069],
  [0xfeff, 0xfeff],
];

export const RAW_CONTROL = new RegExp(
  `[${RANGES.map(([a, b]) => `\\u{${a.toString(16)}}-\\u{${b.toString(16)}}`).join('')}]`,
  'u',
);

/** The raw characters of `text` a terminal would act on, as code points (empty when none). */
export function rawControls(text: string): string[] {
  return [...text]
    .filter((c) => RAW_CONTROL.test(c))
    .map((c) => `U+${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`);
}
