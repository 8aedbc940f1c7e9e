import { printable } from '../../lib/printable.ts';
import type { Key } from './keys.ts';

/** What a key did to the line: nothing to report, or the line is done (or the user wants out). */
export type EditResult = 'submit' | 'eof' | 'interrupt' | 'escape' | null;

/**
 * The prompt line: a buffer of code points, a cursor and the history of submitted lines. It
 * knows no terminal: `view(width)` says what to draw; the terminal draws it. A long line (a
 * paste of 10 000 characters) scrolls sideways on one row instead of wrapping, so a resize
 * only means drawing it again.
 */
export class LineEditor {
  private chars: string[] = [];
  private cursor = 0;
  private scroll = 0;
  private readonly history: string[] = [];
  private historyAt = 0;
  private draft: string[] = [];

  get text(): string {
    return this.chars.join('');
  }

  get length(): number {
    return this.chars.length;
  }

  /** Empties the line for the next prompt; `remember` adds what was submitted to the history. */
  reset(remember?: string): void {
    if (remember && remember.trim() && this.history.at(-1) !== remember) this.history.push(remember);
    this.chars = [];
    this.cursor = 0;
    this.scroll = 0;
    this.historyAt = this.history.length;
  }

  apply(key: Key): EditResult {
    if (key.kind === 'text' || key.kind === 'paste') {
      this.insert(Array.from(key.text));
      return null;
    }
    switch (key.name) {
      case 'enter':
        return 'submit';
      case 'escape':
        return 'escape';
      case 'ctrl-c':
        return 'interrupt';
      case 'ctrl-d':
        if (this.chars.length === 0) return 'eof';
        this.chars.splice(this.cursor, 1);
        return null;
      case 'backspace':
        if (this.cursor > 0) this.chars.splice(--this.cursor, 1);
        return null;
      case 'delete':
        this.chars.splice(this.cursor, 1);
        return null;
      case 'left':
        this.cursor = Math.max(0, this.cursor - 1);
        return null;
      case 'right':
        this.cursor = Math.min(this.chars.length, this.cursor + 1);
        return null;
      case 'home':
        this.cursor = 0;
        return null;
      case 'end':
        this.cursor = this.chars.length;
        return null;
      case 'word-left':
        this.cursor = this.wordStart();
        return null;
      case 'word-right': {
        let i = this.cursor;
        while (i < this.chars.length && /\s/.test(this.chars[i]!)) i++;
        while (i < this.chars.length && !/\s/.test(this.chars[i]!)) i++;
        this.cursor = i;
        return null;
      }
      case 'ctrl-u':
        this.chars.splice(0, this.cursor);
        this.cursor = 0;
        return null;
      case 'ctrl-k':
        this.chars.splice(this.cursor);
        return null;
      case 'ctrl-w': {
        const start = this.wordStart();
        this.chars.splice(start, this.cursor - start);
        this.cursor = start;
        return null;
      }
      case 'up':
      case 'down':
        this.recall(key.name === 'up' ? -1 : 1);
        return null;
      default:
        return null;
    }
  }

  /** Clears the line (Ctrl-C on a line with text). */
  clear(): void {
    this.chars = [];
    this.cursor = 0;
    this.scroll = 0;
  }

  /**
   * What to draw on a row `width` columns wide after `promptWidth` columns of prompt: the part
   * of the line around the cursor, every character shown escaped (a newline of a paste as ↵),
   * and the cursor's column.
   */
  view(width: number, promptWidth: number): { shown: string; column: number } {
    const room = Math.max(8, width - promptWidth - 1);
    const cells = this.chars.map(cellOf);
    // Keep the cursor inside the window, scrolling by the least that does it.
    let used = 0;
    for (let i = this.scroll; i < this.cursor; i++) used += cells[i]!.length;
    if (this.cursor < this.scroll) this.scroll = this.cursor;
    while (used >= room && this.scroll < this.cursor) used -= cells[this.scroll++]!.length;
    let shown = '';
    let column = promptWidth;
    for (let i = this.scroll; i < cells.length; i++) {
      const c = cells[i]!;
      if (shown.length + c.length > room) break;
      if (i < this.cursor) column += c.length;
      shown += c;
    }
    if (this.scroll > 0 && shown.length > 0) shown = `…${shown.slice(1)}`;
    return { shown, column };
  }

  private insert(add: string[]): void {
    // Not splice(…, ...add): a paste of 100 000 characters would be as many arguments.
    this.chars = this.chars.slice(0, this.cursor).concat(add, this.chars.slice(this.cursor));
    this.cursor += add.length;
  }

  private wordStart(): number {
    let i = this.cursor;
    while (i > 0 && /\s/.test(this.chars[i - 1]!)) i--;
    while (i > 0 && !/\s/.test(this.chars[i - 1]!)) i--;
    return i;
  }

  private recall(step: -1 | 1): void {
    const at = this.historyAt + step;
    if (at < 0 || at > this.history.length) return;
    if (this.historyAt === this.history.length) this.draft = this.chars;
    this.historyAt = at;
    this.chars = at === this.history.length ? this.draft : Array.from(this.history[at]!);
    this.cursor = this.chars.length;
    this.scroll = 0;
  }
}

function cellOf(c: string): string {
  return c === '\n' ? '↵' : printable(c);
}
