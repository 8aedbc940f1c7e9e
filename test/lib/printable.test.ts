import { describe, expect, it } from 'vitest';
import { printable, printableText, terminalJson } from '../../src/lib/printable.ts';
import { RAW_CONTROL } from '../support/terminal.ts';

const ESC = String.fromCharCode(0x1b);
const BEL = String.fromCharCode(0x07);
const CSI8 = String.fromCharCode(0x9b);
const DEL = String.fromCharCode(0x7f);
const RLO = String.fromCharCode(0x202e);
const LRI = String.fromCharCode(0x2066);
const ZWSP = String.fromCharCode(0x200b);
const LSEP = String.fromCharCode(0x2028);
const BOM = String.fromCharCode(0xfeff);
const ALM = String.fromCharCode(0x061c);
const NUL = String.fromCharCode(0);

/** Every character a terminal could act on, by the brief's list: C0, DEL, C1, bidi, invisible. */
const HOSTILE = `a${ESC}]52;c;cm0gLXJmIH4=${BEL}b${ESC}[2K${ESC}[1A\rapproved${CSI8}31m${DEL}${RLO}gnp.exe${LRI}${ZWSP}${LSEP}${BOM}${ALM}${NUL}`;

const RAW = RAW_CONTROL;

describe('printable', () => {
  it('leaves ordinary text, including non-ASCII letters and emoji, alone', () => {
    expect(printable('npm test -- café ✓ 日本 🙂')).toBe('npm test -- café ✓ 日本 🙂');
  });

  it('escapes every control and format character, newlines and tabs too', () => {
    const shown = printable(`${HOSTILE}\n\t`);
    expect(shown).not.toMatch(RAW);
    expect(shown).not.toMatch(/[\n\t]/);
    expect(shown).toBe(
      'a\\x1b]52;c;cm0gLXJmIH4=\\x07b\\x1b[2K\\x1b[1A\\rapproved\\x9b31m\\x7f\\u202egnp.exe\\u2066\\u200b\\u2028\\ufeff\\u061c\\x00\\n\\t',
    );
  });

  it('is idempotent: what it writes has nothing left to escape', () => {
    expect(printable(printable(HOSTILE))).toBe(printable(HOSTILE));
  });
});

describe('printableText', () => {
  it('keeps newlines and tabs and escapes the rest', () => {
    const shown = printableText(`line 1\n\tline 2${ESC}[2J\r\n`);
    expect(shown).toBe('line 1\n\tline 2\\x1b[2J\\r\n');
    expect(printableText(HOSTILE)).not.toMatch(RAW);
  });
});

describe('terminalJson', () => {
  it('parses back to exactly the original text, with no raw control or format character in it', () => {
    const value = { text: HOSTILE, nested: [`${RLO}x`, { k: `${CSI8}y` }], n: 1 };
    const json = terminalJson(value);
    expect(json).not.toMatch(RAW);
    expect(JSON.parse(json)).toEqual(value);
    expect(json).toContain('\\u009b');
    expect(json).toContain('\\u202e');
    expect(json).toContain('\\u001b');
  });

  it('is JSON.stringify for ordinary values', () => {
    for (const v of [{ a: 'café ✓', b: [1, null, true] }, 'x', 3, null])
      expect(terminalJson(v)).toBe(JSON.stringify(v));
  });
});
