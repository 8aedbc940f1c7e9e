import { describe, expect, it } from 'vitest';
import { HeadTailBuffer } from '../../src/tools/outputBuffer.ts';

describe('HeadTailBuffer', () => {
  it('keeps everything under the cap', () => {
    const b = new HeadTailBuffer(10);
    b.push('abc');
    b.push('defghij');
    expect(b.toString()).toBe('abcdefghij');
    expect(b.droppedChars).toBe(0);
  });

  it('keeps head and tail and says how much was dropped', () => {
    const b = new HeadTailBuffer(10);
    for (const c of 'abcdefghijklmnopqrstuvwxyz') b.push(c);
    expect(b.droppedChars).toBe(16);
    expect(b.toString()).toBe('abcde\n[… 16 characters truncated …]\nvwxyz');
  });

  it('handles one huge chunk', () => {
    const b = new HeadTailBuffer(4);
    b.push('0123456789');
    expect(b.toString()).toBe('01\n[… 6 characters truncated …]\n89');
    expect(b.totalChars).toBe(10);
  });
});
