import { out, promptLine, screenControl, setFooter } from '../io.ts';
import { type Key, KeyDecoder } from './keys.ts';
import { LineEditor } from './lineEditor.ts';

export type LineRead =
  | { kind: 'line'; text: string }
  /** Ctrl-D on an empty line. */
  | { kind: 'eof' }
  /** Ctrl-C on an empty line (on a line with text it only clears the line). */
  | { kind: 'interrupt' }
  /** Esc, when the caller asked for it (a question during a run: Esc also interrupts). */
  | { kind: 'escape' };

export interface TerminalInput {
  isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

export interface TerminalOutput {
  columns?: number;
  on(event: 'resize', listener: () => void): unknown;
  off(event: 'resize', listener: () => void): unknown;
}

/**
 * The interactive session's terminal: raw mode, bracketed paste, keys decoded (keys.ts), one
 * prompt line edited in place (lineEditor.ts). Between prompts (a run going) keys go to the
 * handler the session set (Esc, Ctrl-C); anything else typed then is edited into the next
 * prompt's line at once and shown dim under the output (`› text`, io.ts's footer), so typing
 * ahead is visible. A key that would end the line (Enter, Ctrl-D on an empty line) waits, with
 * every key after it, for the next prompt. All drawing goes through src/cli/io.ts.
 */
export class ChatTerminal {
  private readonly decoder = new KeyDecoder();
  private readonly editor = new LineEditor();
  private reading: {
    prompt: string;
    escape: boolean;
    resolve: (r: LineRead) => void;
  } | null = null;
  private handler: ((key: Key) => boolean) | null = null;
  private typeahead: Key[] = [];
  private started = false;
  private cancelled = false;

  constructor(
    private readonly input: TerminalInput,
    private readonly output: TerminalOutput,
  ) {}

  start(): void {
    if (this.started) return;
    this.started = true;
    this.input.setRawMode?.(true);
    screenControl('pasteOn');
    this.input.on('data', this.onData);
    this.output.on('resize', this.onResize);
    this.input.resume();
  }

  /** Gives the terminal back as it was (cooked mode, no bracketed paste). */
  stop(): void {
    if (!this.started) return;
    this.started = false;
    this.input.off('data', this.onData);
    this.output.off('resize', this.onResize);
    setFooter(null);
    screenControl('pasteOff');
    this.input.setRawMode?.(false);
    this.input.pause();
  }

  get width(): number {
    return this.output.columns && this.output.columns > 0 ? this.output.columns : 80;
  }

  /**
   * Keys while no prompt is shown: `handler` returns true for a key it took; any other key
   * is kept for the next prompt. Null: every key is kept.
   */
  onKeys(handler: ((key: Key) => boolean) | null): void {
    this.handler = handler;
  }

  /** Shows `prompt` and edits a line until Enter (or Ctrl-D / Ctrl-C on an empty line, or Esc if asked for). */
  readLine(prompt: string, options: { escape?: boolean } = {}): Promise<LineRead> {
    const onEscape = options.escape === true;
    if (this.reading) throw new Error('a prompt is already being read');
    if (this.cancelled) return Promise.resolve({ kind: 'eof' });
    return new Promise<LineRead>((resolve) => {
      this.reading = { prompt, escape: onEscape, resolve };
      // The editor keeps what was typed ahead during the run (reset after the last line).
      setFooter(null);
      const early = this.typeahead;
      this.typeahead = [];
      this.draw();
      for (const k of early) if (this.reading) this.key(k);
    });
  }

  /** Ends the prompt being read (or the next one) as if Ctrl-D was pressed: the session is leaving. */
  cancel(): void {
    const reading = this.reading;
    if (!reading) {
      this.cancelled = true;
      return;
    }
    this.reading = null;
    out();
    reading.resolve({ kind: 'eof' });
  }

  private readonly onData = (chunk: Buffer) => {
    for (const key of this.decoder.push(chunk)) this.key(key);
  };

  private readonly onResize = () => {
    if (this.reading) this.draw();
    else this.drawTypeahead();
  };

  /** What was typed ahead, under the output; nothing while nothing was typed. */
  private drawTypeahead(): void {
    if (!this.started) return;
    const { shown } = this.editor.view(this.width, 2);
    setFooter(this.editor.length > 0 ? `› ${shown}` : null);
  }

  private key(key: Key): void {
    const reading = this.reading;
    if (!reading) {
      if (this.handler?.(key)) return;
      // Edited at once while nothing ends the line; from a key that would, kept in order.
      if (this.typeahead.length > 0 || this.editor.apply(key) !== null) this.typeahead.push(key);
      else this.drawTypeahead();
      return;
    }
    const result = this.editor.apply(key);
    if (result === null) {
      this.draw();
      return;
    }
    if (result === 'escape' && !reading.escape) return;
    if (result === 'interrupt' && this.editor.length > 0) {
      this.editor.clear();
      this.draw();
      return;
    }
    const text = this.editor.text;
    this.finish(result === 'submit' ? text : '');
    this.editor.reset(result === 'submit' ? text : undefined);
    this.reading = null;
    reading.resolve(
      result === 'submit'
        ? { kind: 'line', text }
        : result === 'eof'
          ? { kind: 'eof' }
          : result === 'interrupt'
            ? { kind: 'interrupt' }
            : { kind: 'escape' },
    );
  }

  /** The prompt line as it stays on screen once it is done: the start of the line and its length if it does not fit. */
  private finish(text: string): void {
    const prompt = this.reading!.prompt;
    const room = Math.max(8, this.width - prompt.length - 1);
    const chars = Array.from(text.replace(/\n/g, '↵'));
    const note = chars.length > room ? ` … (${chars.length} characters)` : '';
    const shown =
      chars.length > room ? chars.slice(0, Math.max(1, room - note.length)).join('') + note : text;
    promptLine(prompt, shown.replace(/\n/g, '↵'), 0);
    out();
  }

  private draw(): void {
    const r = this.reading;
    if (!r) return;
    const { shown, column } = this.editor.view(this.width, r.prompt.length);
    promptLine(r.prompt, shown, column);
  }
}
