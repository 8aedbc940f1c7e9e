import { describe, expect, it } from 'vitest';
import { parseChoice, ruleFor } from '../../src/cli/chat/ask.ts';
import { KeyDecoder } from '../../src/cli/chat/keys.ts';
import { LineEditor } from '../../src/cli/chat/lineEditor.ts';
import type { AnyTool } from '../../src/tools/types.ts';

describe('the key decoder', () => {
  it('reads text, control keys, CSI keys and a lone Escape', () => {
    const d = new KeyDecoder();
    expect(d.push(Buffer.from('hi\x1b[D\x7f\r'))).toEqual([
      { kind: 'text', text: 'hi' },
      { kind: 'key', name: 'left' },
      { kind: 'key', name: 'backspace' },
      { kind: 'key', name: 'enter' },
    ]);
    expect(d.push(Buffer.from('\x1b'))).toEqual([{ kind: 'key', name: 'escape' }]);
    expect(d.push(Buffer.from('\x03\x04'))).toEqual([
      { kind: 'key', name: 'ctrl-c' },
      { kind: 'key', name: 'ctrl-d' },
    ]);
  });

  it('keeps a sequence or a UTF-8 character cut between reads, and turns bytes that are not UTF-8 into U+FFFD', () => {
    const d = new KeyDecoder();
    expect(d.push(Buffer.from('\x1b['))).toEqual([]);
    expect(d.push(Buffer.from('A'))).toEqual([{ kind: 'key', name: 'up' }]);
    const e = Buffer.from('é');
    expect(d.push(e.subarray(0, 1))).toEqual([]);
    expect(d.push(e.subarray(1))).toEqual([{ kind: 'text', text: 'é' }]);
    expect(d.push(Buffer.from([0x61, 0xff, 0x62]))).toEqual([{ kind: 'text', text: 'a\uFFFDb' }]);
  });

  it('a bracketed paste is one key across reads, its newlines kept, escape sequences inside it only text', () => {
    const d = new KeyDecoder();
    expect(d.push('\x1b[200~line one\r\nline')).toEqual([]);
    expect(d.push(' two\x1b[20')).toEqual([]);
    expect(d.push('1~x')).toEqual([
      { kind: 'paste', text: 'line one\nline two' },
      { kind: 'text', text: 'x' },
    ]);
  });

  it('drops other controls (C0, C1) instead of passing them on', () => {
    const d = new KeyDecoder();
    expect(d.push('a\x07\u009bb')).toEqual([{ kind: 'text', text: 'ab' }]);
  });
});

describe('the line editor', () => {
  it('edits, recalls history, and submits', () => {
    const e = new LineEditor();
    e.apply({ kind: 'text', text: 'hello world' });
    e.apply({ kind: 'key', name: 'ctrl-w' });
    expect(e.text).toBe('hello ');
    e.apply({ kind: 'key', name: 'home' });
    e.apply({ kind: 'text', text: '>' });
    expect(e.text).toBe('>hello ');
    expect(e.apply({ kind: 'key', name: 'enter' })).toBe('submit');
    e.reset(e.text);
    expect(e.apply({ kind: 'key', name: 'ctrl-d' })).toBe('eof');
    e.apply({ kind: 'key', name: 'up' });
    expect(e.text).toBe('>hello ');
  });

  it('shows a long line as a window around the cursor, escaped', () => {
    const e = new LineEditor();
    e.apply({ kind: 'paste', text: `${'x'.repeat(10_000)}\x1b[31m\n` });
    const v = e.view(40, 2);
    expect(v.shown.length).toBeLessThanOrEqual(37);
    expect(v.shown.endsWith('\\x1b[31m↵')).toBe(true);
    expect(v.shown).not.toContain('\x1b');
    expect(v.column).toBe(2 + v.shown.length);
  });
});

describe('permission answers', () => {
  const tool = (name: string) => ({ name }) as AnyTool;
  it('names the rule of exactly this call, or none', () => {
    expect(ruleFor({ tool: tool('Bash'), input: { command: 'npm test' }, toolUseId: 't', cwd: '/p' })).toBe(
      'Bash(npm test)',
    );
    expect(
      ruleFor({ tool: tool('Edit'), input: { file_path: '/p/src/a.ts' }, toolUseId: 't', cwd: '/p' }),
    ).toBe('Edit(src/a.ts)');
    expect(
      ruleFor({ tool: tool('Edit'), input: { file_path: '/etc/passwd' }, toolUseId: 't', cwd: '/p' }),
    ).toBeNull();
    expect(
      ruleFor({ tool: tool('Edit'), input: { file_path: 'a*.ts' }, toolUseId: 't', cwd: '/p' }),
    ).toBeNull();
    expect(
      ruleFor({ tool: tool('WebFetch'), input: { url: 'https://example.com/x' }, toolUseId: 't', cwd: '/p' }),
    ).toBe('WebFetch(domain:example.com)');
  });

  it('reads numbers, y/n and a reason', () => {
    expect(parseChoice('1', 'Bash(x)')).toEqual({ kind: 'yes' });
    expect(parseChoice('3', 'Bash(x)')).toEqual({ kind: 'always', scope: 'project', rule: 'Bash(x)' });
    expect(parseChoice('3', null)).toBeUndefined();
    expect(parseChoice('n: too risky', null)).toEqual({ kind: 'no', reason: 'too risky' });
    expect(parseChoice('no', null)).toBe('no-reason');
    expect(parseChoice('2', null)).toBe('no-reason');
    expect(parseChoice('maybe', 'Bash(x)')).toBeUndefined();
  });
});
