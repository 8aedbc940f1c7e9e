/**
 * GNU sed scripts, read the way sed's own compiler (compile.c) reads them, to find the commands
 * that run a command or write a file: `e`, `w`, `W`, and the `e` and `w` flags of `s`. A script
 * is a list of chunks (one per `-e`, or the script operand): sed compiles them in order, and the
 * text of `a`, `i` and `c` that ends in a backslash goes on in the next chunk.
 *
 * Where sed's grammar is subtle the reader follows it, not a simplification of it: labels of
 * `:`, `b`, `t`, `T` and the version of `v` end at a blank, `;`, `}` or `#` (`:a;e cmd` is two
 * commands, `b x e cmd` too); `r`, `R`, `w`, `W` file names run to the end of the line; a
 * bracket expression in a regular expression may hold the delimiter (`s/[/]/x/w f` writes `f`);
 * flags of `s` may be separated by blanks. Anything the reader cannot follow — a command or
 * flag it does not know, an unterminated part, a delimiter that is a newline, a backslash or not
 * ASCII — is reported as a risk (fail closed): sed would refuse it, or read it another way.
 * test/tools/permissions/programArgs.int.test.ts checks the reader against GNU sed itself.
 */

export interface SedReading {
  /** Why the script may run a command or write a file; undefined when it cannot. */
  risk?: string;
  /** It reads a file named in the script (`r`, `R`): reading is not a risk, the differential test needs to know. */
  reads: boolean;
}

const EOF = undefined;
type Ch = string | undefined;

const isSpace = (c: Ch) => c === ' ' || c === '\t' || c === '\n' || c === '\v' || c === '\f' || c === '\r';
const isBlank = (c: Ch) => c === ' ' || c === '\t';
const isDigit = (c: Ch) => c !== undefined && c >= '0' && c <= '9';

class Refused extends Error {}

class Reader {
  private s = '';
  private i = 0;
  /** `a`, `i`, `c` text that ended in a backslash: the next chunk starts inside it. */
  private pendingText = false;
  reads = false;
  risk: string | undefined;

  read(chunks: readonly string[]): void {
    for (const chunk of chunks) {
      this.s = chunk;
      this.i = 0;
      this.program();
      if (this.risk) return;
    }
  }

  private inchar(): Ch {
    return this.i < this.s.length ? this.s[this.i++] : EOF;
  }

  private savchar(c: Ch): void {
    if (c !== EOF) this.i--;
  }

  private nonblank(): Ch {
    let c: Ch;
    do c = this.inchar();
    while (isBlank(c));
    return c;
  }

  private refuse(why: string): never {
    throw new Refused(why);
  }

  private program(): void {
    if (this.pendingText) this.text('\n');
    for (;;) {
      let c: Ch;
      do c = this.inchar();
      while (c === ';' || isSpace(c));
      if (c === EOF) return;
      if (this.address(c)) {
        c = this.nonblank();
        if (c === ',') {
          if (!this.address(this.nonblank())) this.refuse('a range without a second address');
          c = this.nonblank();
        }
      }
      if (c === '!') {
        c = this.nonblank();
        if (c === '!') this.refuse('multiple `!`');
      }
      if (this.command(c)) return;
    }
  }

  /** Returns true when a risk was found (reading stops there). */
  private command(c: Ch): boolean {
    switch (c) {
      case '#':
        while (c !== EOF && c !== '\n') c = this.inchar();
        return false;
      case 'v':
      case ':':
      case 'b':
      case 't':
      case 'T':
        if (this.label() === '' && c === ':') this.refuse('":" lacks a label');
        return false;
      case '{':
        return false;
      case '}':
        this.endOfCommand();
        return false;
      case 'e':
        this.risk = 'the e command runs a command';
        return true;
      case 'a':
      case 'i':
      case 'c': {
        let t = this.nonblank();
        if (t === EOF) this.refuse(`${c} without text`);
        if (t === '\\') t = this.inchar();
        else {
          this.savchar(t);
          t = '\n';
        }
        this.text(t);
        return false;
      }
      case 'q':
      case 'Q':
      case 'l':
      case 'L': {
        const d = this.nonblank();
        if (isDigit(d)) this.integer(d);
        else this.savchar(d);
        this.endOfCommand();
        return false;
      }
      case '=':
      case 'd':
      case 'D':
      case 'F':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'z':
      case 'x':
        this.endOfCommand();
        return false;
      case 'r':
      case 'R':
        if (this.fileName() === '') this.refuse(`${c} without a file name`);
        this.reads = true;
        return false;
      case 'w':
      case 'W':
        this.risk = `the ${c} command writes a file`;
        return true;
      case 's':
        return this.substitute();
      case 'y': {
        const d = this.delimiter();
        this.slashed(d, false);
        this.slashed(d, false);
        this.endOfCommand();
        return false;
      }
      case EOF:
        this.refuse('an address without a command');
        break;
      default:
        this.refuse(`an unknown command ${JSON.stringify(c)}`);
    }
    return false;
  }

  private substitute(): boolean {
    const d = this.delimiter();
    this.slashed(d, true);
    this.slashed(d, false);
    for (;;) {
      const f = this.nonblank();
      switch (f) {
        case 'i':
        case 'I':
        case 'm':
        case 'M':
        case 'p':
        case 'g':
          continue;
        case 'e':
          this.risk = 'the e flag of s runs the result as a command';
          return true;
        case 'w':
          this.risk = 'the w flag of s writes a file';
          return true;
        case '}':
        case '#':
          this.savchar(f);
          return false;
        case EOF:
        case '\n':
        case ';':
          return false;
        case '\r':
          if (this.inchar() === '\n') return false;
          this.refuse('an unknown flag of s');
          break;
        default:
          if (isDigit(f)) {
            this.integer(f);
            continue;
          }
          this.refuse(`an unknown flag of s ${JSON.stringify(f)}`);
      }
    }
  }

  /** compile_address: true when an address was read (nothing is consumed otherwise). */
  private address(c: Ch): boolean {
    if (c === '/' || c === '\\') {
      const d = c === '\\' ? this.inchar() : c;
      if (d === EOF || d === '\n' || !isAscii(d)) this.refuse('an address sed would read another way');
      this.slashed(d, true);
      for (;;) {
        const f = this.nonblank();
        if (f === 'I' || f === 'M') continue;
        this.savchar(f);
        return true;
      }
    }
    if (isDigit(c)) {
      this.integer(c);
      const t = this.nonblank();
      if (t === '~') this.integer(this.nonblank());
      else this.savchar(t);
      return true;
    }
    if (c === '+' || c === '~') {
      this.integer(this.nonblank());
      return true;
    }
    return c === '$';
  }

  private integer(c: Ch): void {
    while (isDigit(c)) c = this.inchar();
    this.savchar(c);
  }

  /** read_label: up to a blank, newline, `;`, `}` or `#` (which is left for the next command). */
  private label(): string {
    let out = '';
    let c = this.nonblank();
    while (c !== EOF && c !== '\n' && !isBlank(c) && c !== ';' && c !== '}' && c !== '#') {
      out += c;
      c = this.inchar();
    }
    this.savchar(c);
    return out;
  }

  /** read_filename: the rest of the line. */
  private fileName(): string {
    let out = '';
    let c = this.nonblank();
    while (c !== EOF && c !== '\n') {
      out += c;
      c = this.inchar();
    }
    return out;
  }

  private endOfCommand(): void {
    const c = this.nonblank();
    if (c === '}' || c === '#') this.savchar(c);
    else if (c !== EOF && c !== '\n' && c !== ';')
      this.refuse(`extra characters after a command (${JSON.stringify(c)})`);
  }

  /** read_text: the text of a, i, c up to an unescaped newline; a backslash at the chunk's end continues it. */
  private text(lead: Ch): void {
    this.pendingText = true;
    if (lead === EOF) return;
    let c = this.inchar();
    while (c !== EOF && c !== '\n') {
      if (c === '\\') {
        c = this.inchar();
        if (c === EOF) return;
      }
      c = this.inchar();
    }
    this.pendingText = false;
  }

  private delimiter(): string {
    const d = this.inchar();
    if (d === EOF || d === '\n' || d === '\\' || !isAscii(d))
      this.refuse('a delimiter sed would read another way');
    return d;
  }

  /** match_slash: a part ending at an unescaped `d`; in a regex a bracket expression may hold `d`. */
  private slashed(d: string, regex: boolean): void {
    for (let c = this.inchar(); c !== EOF && c !== '\n'; c = this.inchar()) {
      if (c === d) return;
      if (c === '\\') {
        if (this.inchar() === EOF) break;
      } else if (c === '[' && regex) {
        if (this.bracket() !== ']') break;
      }
    }
    this.refuse('an unterminated regular expression or replacement');
  }

  /** snarf_char_class: returns the character it stopped at (`]` when the class is closed). */
  private bracket(): Ch {
    let c = this.inchar();
    if (c === '^') c = this.inchar();
    if (c === ']') c = this.inchar();
    let state = 0;
    let delim: Ch;
    for (; ; c = this.inchar()) {
      if (c === EOF || c === '\n') return c;
      if (c === '.' || c === ':' || c === '=') {
        if (state === 1) {
          delim = c;
          state = 2;
          continue;
        }
        if (state === 2 && c === delim) {
          state = 3;
          continue;
        }
      } else if (c === '[') {
        if (state === 0) state = 1;
        continue;
      } else if (c === ']') {
        if (state === 0 || state === 1) return c;
        if (state === 3) state = 0;
      }
      state &= ~1;
    }
  }
}

function isAscii(c: string): boolean {
  return c.charCodeAt(0) < 0x80;
}

/** Reads a script given as one string or as the chunks of several `-e` options. */
export function readSedScript(script: string | readonly string[]): SedReading {
  const r = new Reader();
  try {
    r.read(typeof script === 'string' ? [script] : script);
  } catch (e) {
    if (!(e instanceof Refused)) throw e;
    return { risk: `${e.message} (sed would refuse it, or read it another way)`, reads: r.reads };
  }
  return { risk: r.risk, reads: r.reads };
}

/** Why a sed script may run a command or write a file; undefined when it cannot. */
export function sedScriptRisk(script: string | readonly string[]): string | undefined {
  return readSedScript(script).risk;
}
