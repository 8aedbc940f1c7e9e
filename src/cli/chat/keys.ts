import { StringDecoder } from 'node:string_decoder';

/** What the interactive session reads from a terminal in raw mode. */
export type KeyName =
  | 'enter'
  | 'backspace'
  | 'delete'
  | 'left'
  | 'right'
  | 'up'
  | 'down'
  | 'home'
  | 'end'
  | 'word-left'
  | 'word-right'
  | 'escape'
  | 'tab'
  | 'ctrl-c'
  | 'ctrl-d'
  | 'ctrl-u'
  | 'ctrl-k'
  | 'ctrl-w'
  | 'ctrl-l';

export type Key =
  | { kind: 'text'; text: string }
  | { kind: 'paste'; text: string }
  | { kind: 'key'; name: KeyName };

const CTRL: Record<string, KeyName> = {
  '\r': 'enter',
  '\n': 'enter',
  '\x7f': 'backspace',
  '\b': 'backspace',
  '\t': 'tab',
  '\x03': 'ctrl-c',
  '\x04': 'ctrl-d',
  '\x01': 'home',
  '\x05': 'end',
  '\x02': 'left',
  '\x06': 'right',
  '\x10': 'up',
  '\x0e': 'down',
  '\x15': 'ctrl-u',
  '\x0b': 'ctrl-k',
  '\x17': 'ctrl-w',
  '\x0c': 'ctrl-l',
};

const CSI: Record<string, KeyName> = {
  A: 'up',
  B: 'down',
  C: 'right',
  D: 'left',
  H: 'home',
  F: 'end',
  '1~': 'home',
  '7~': 'home',
  '4~': 'end',
  '8~': 'end',
  '3~': 'delete',
  '1;5C': 'word-right',
  '1;5D': 'word-left',
  '1;3C': 'word-right',
  '1;3D': 'word-left',
};

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/**
 * Bytes of a raw-mode terminal → keys. Decoded as UTF-8 (a byte that is not UTF-8 becomes
 * U+FFFD: nothing of the input reaches the screen or the log unescaped or undecoded).
 * A lone ESC at the end of a read is the Escape key: terminals send a key's sequence in one
 * write, so an ESC with nothing after it in the same read is not the start of one. A paste
 * between bracketed-paste markers is one `paste` key however many reads it spans.
 */
export class KeyDecoder {
  private readonly utf8 = new StringDecoder('utf8');
  private pending = '';
  private paste: string[] | null = null;

  push(chunk: Buffer | string): Key[] {
    const s = this.pending + (typeof chunk === 'string' ? chunk : this.utf8.write(chunk));
    this.pending = '';
    const keys: Key[] = [];
    let i = 0;
    let text = '';
    const flush = () => {
      if (text) keys.push({ kind: 'text', text });
      text = '';
    };
    while (i < s.length) {
      if (this.paste) {
        const end = s.indexOf(PASTE_END, i);
        if (end < 0) {
          // Keep what could be the start of the end marker for the next read.
          const tail = partialSuffix(s, PASTE_END);
          this.paste.push(s.slice(i, s.length - tail));
          this.pending = s.slice(s.length - tail);
          return keys;
        }
        this.paste.push(s.slice(i, end));
        keys.push({ kind: 'paste', text: this.paste.join('').replace(/\r\n?/g, '\n') });
        this.paste = null;
        i = end + PASTE_END.length;
        continue;
      }
      const c = s[i]!;
      if (c === '\x1b') {
        flush();
        if (i + 1 >= s.length) {
          keys.push({ kind: 'key', name: 'escape' });
          i++;
          continue;
        }
        const next = s[i + 1]!;
        if (next === '[' || next === 'O') {
          let j = i + 2;
          while (j < s.length && /[0-9;?]/.test(s[j]!)) j++;
          if (j >= s.length) {
            // A sequence cut between two reads: wait for its end.
            this.pending = s.slice(i);
            return keys;
          }
          const body = s.slice(i + 2, j + 1);
          i = j + 1;
          if (next === '[' && body === '200~') {
            this.paste = [];
            continue;
          }
          const name = CSI[body];
          if (name) keys.push({ kind: 'key', name });
          continue;
        }
        if (next === '\x1b') {
          keys.push({ kind: 'key', name: 'escape' });
          i++;
          continue;
        }
        // Alt+key: the few that edit, the rest ignored.
        if (next === 'b') keys.push({ kind: 'key', name: 'word-left' });
        else if (next === 'f') keys.push({ kind: 'key', name: 'word-right' });
        else if (next === '\x7f') keys.push({ kind: 'key', name: 'ctrl-w' });
        i += 2;
        continue;
      }
      const name = CTRL[c];
      if (name) {
        flush();
        keys.push({ kind: 'key', name });
        // CR LF from a terminal that sends both is one Enter.
        i += c === '\r' && s[i + 1] === '\n' ? 2 : 1;
        continue;
      }
      const code = c.charCodeAt(0);
      if (code < 0x20 || (code >= 0x80 && code < 0xa0)) {
        i++;
        continue;
      }
      text += c;
      i++;
    }
    flush();
    return keys;
  }
}

/** The length of the longest end of `s` that is a proper prefix of `marker`. */
function partialSuffix(s: string, marker: string): number {
  for (let n = Math.min(marker.length - 1, s.length); n > 0; n--) {
    if (s.endsWith(marker.slice(0, n))) return n;
  }
  return 0;
}
