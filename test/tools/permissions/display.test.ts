import { describe, expect, it } from 'vitest';
import { approvalQuestion } from '../../../src/tools/permissions/display.ts';

/** What the person asked sees must be what would run: whole, and not rewritten by the terminal. */

describe('approvalQuestion', () => {
  it('shows a long command whole: the part after 200 characters is where `; rm -rf ~` would hide', () => {
    const command = `echo ${'a'.repeat(300)}; rm -rf ~`;
    const q = approvalQuestion('Bash', { command, description: 'print' });
    expect(q).toContain('; rm -rf ~');
    expect(q).toContain('"description":"print"');
  });

  it('escapes terminal controls, bidi overrides and zero-width characters', () => {
    const esc = String.fromCharCode(0x1b);
    const rlo = String.fromCharCode(0x202e);
    const zwsp = String.fromCharCode(0x200b);
    const command = `rm -rf ~ #${esc}[2K${esc}[1G${rlo}sl${zwsp}\r`;
    const q = approvalQuestion('Bash', { command }, `why${esc}[8m`);
    for (const c of [esc, rlo, zwsp, '\r']) expect(q).not.toContain(c);
    expect(q).toContain('\\x1b[2K');
    expect(q).toContain('\\u202e');
    expect(q).toContain('\\r');
  });

  it('shows other tools’ input as JSON', () => {
    expect(approvalQuestion('Write', { file_path: 'a.txt', content: 'x\ny' })).toBe(
      'Allow Write: {"file_path":"a.txt","content":"x\\ny"}',
    );
  });
});
