/**
 * A parser for the part of bash that a permission rule can vouch for, and nothing more.
 *
 * Why our own: the registry's candidates did not fit. `sh-syntax` (mvdan/sh in WASM, the
 * maintained one) returns an AST whose command nodes carry positions only; `mvdan-sh` (the
 * GopherJS build) was deprecated by its author; `bash-parser` is unmaintained since 2017;
 * `shell-quote` tokenises but is no grammar; tree-sitter-bash is a recovering highlighting
 * grammar (20 MB). A permission check needs the opposite of recovery: it must know exactly what
 * bash will run, or say it does not.
 *
 * So this parser accepts a small, exactly specified subset — simple commands of literal words
 * (unquoted, 'single', "double" without expansions, backslash escapes), joined by ; & && || |
 * |& and newlines, with comments and a few redirections — and stops at the first thing outside
 * it (any `$` expansion including $'…' ANSI-C quoting, backquotes, here-documents, brace
 * expansion, subshells and groups, compound commands, process substitution…), saying what it
 * was in `opaque`. Callers treat opaque commands as "ask", never "allow". The differential test
 * (test/tools/permissions/shellParse.int.test.ts) checks the accepted subset against bash itself.
 */

export interface Word {
  /** The word after quote removal: what bash passes as the argument (unless `glob`). */
  value: string;
  /**
   * Bash may replace it: an unquoted *, ? or [ (file names) or ~ (home, $PWD, $OLDPWD). Rules
   * compare such a word as a pattern (deny) or refuse to vouch for it as a command name (allow).
   */
  glob: boolean;
}

export type RedirectKind =
  /** `2>&1`, `>&2`, `<&0`, `>&-`: between descriptors, touches no file. */
  | 'dup'
  /** `> /dev/null` and friends. */
  | 'null'
  /** `< file`: reads a file. */
  | 'read'
  /** `> file`, `>> file`, `&> file`, `<> file`: creates or changes a file. */
  | 'write';

export interface Redirect {
  kind: RedirectKind;
  op: string;
  target: string;
}

export interface SimpleCommand {
  /** `NAME=value` words before the command name (also alone: `X=1`). */
  assignments: string[];
  words: Word[];
  redirects: Redirect[];
}

export interface ParsedShell {
  commands: SimpleCommand[];
  /** Why the parser stopped before the end (the command is then not fully accounted for). */
  opaque?: string;
}

const BLANK = new Set([' ', '\t']);
const OPERATOR_START = new Set([';', '&', '|', '\n', '(', ')', '<', '>']);
const GLOB = new Set(['*', '?', '[']);
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;
/** Reserved words that open or close compound commands when they stand where a command name goes. */
const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'case',
  'esac',
  'for',
  'select',
  'while',
  'until',
  'do',
  'done',
  'function',
  'in',
  '{',
  '}',
  '[[',
  ']]',
  'coproc',
]);

class Opaque extends Error {}

export function parseShell(src: string): ParsedShell {
  return new Parser(src).parse();
}

class Parser {
  private i = 0;
  private readonly commands: SimpleCommand[] = [];
  private cur: SimpleCommand = { assignments: [], words: [], redirects: [] };

  constructor(private readonly s: string) {}

  parse(): ParsedShell {
    try {
      this.run();
      this.endCommand();
      return { commands: this.commands };
    } catch (e) {
      if (!(e instanceof Opaque)) throw e;
      // What was read before the stop still counts, for deny rules: `rm $x` is an rm.
      this.endCommand();
      return { commands: this.commands, opaque: e.message };
    }
  }

  private run(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (BLANK.has(c)) {
        this.i++;
        continue;
      }
      if (c === '\\' && s[this.i + 1] === '\n') {
        this.i += 2; // line continuation between words
        continue;
      }
      if (c === '#') {
        // A word never starts here mid-word (words are read whole below): this is a comment.
        while (this.i < s.length && s[this.i] !== '\n') this.i++;
        continue;
      }
      if (this.redirection()) continue;
      if (OPERATOR_START.has(c)) {
        this.operator();
        continue;
      }
      this.word();
    }
  }

  private endCommand(): void {
    const c = this.cur;
    if (c.words.length || c.assignments.length || c.redirects.length) this.commands.push(c);
    this.cur = { assignments: [], words: [], redirects: [] };
  }

  private operator(): void {
    const s = this.s;
    const c = s[this.i] as string;
    const two = s.slice(this.i, this.i + 2);
    if (c === '(' || c === ')') throw new Opaque('a subshell, group or function definition');
    if (two === ';;' || two === ';&') throw new Opaque('a case statement');
    if (c === '|' && this.cur.words.length === 0 && this.cur.assignments.length === 0) {
      throw new Opaque('a pipe with no command before it');
    }
    if (two === '&&' || two === '||' || two === '|&') this.i += 2;
    else this.i += 1;
    this.endCommand();
  }

  /** `[n]>`, `[n]>>`, `[n]<`, `&>`, `>&n`, …: consumes it and its target, or returns false. */
  private redirection(): boolean {
    const s = this.s;
    const m = /^(\d*)(&>>|&>|>>|>\||>&|<&|<>|<<<|<<-|<<|<\(|>\(|>|<)/.exec(s.slice(this.i, this.i + 16));
    if (!m) return false;
    const op = m[2] as string;
    // `&>` takes no descriptor: in `0&>f` the 0 is a word of its own (read by word()).
    if (m[1] && op.startsWith('&')) return false;
    if (op === '<<' || op === '<<-') throw new Opaque('a here-document');
    if (op === '<<<') throw new Opaque('a here-string');
    if (op === '<(' || op === '>(') throw new Opaque('a process substitution');
    this.i += m[0].length;
    this.skipBlanks();
    if ((op === '>&' || op === '<&') && s[this.i] === '-') {
      // `>&-` closes the descriptor; bash takes the `-` alone (`3>&-cmd` runs cmd).
      this.i++;
      this.cur.redirects.push({ kind: 'dup', op: m[0], target: '-' });
      return true;
    }
    const target = this.readWord();
    if (!target) throw new Opaque(`a redirection (${op}) without a target`);
    if (target.glob) throw new Opaque('a redirection to a glob');
    this.cur.redirects.push({ kind: redirectKind(op, target.value), op: m[0], target: target.value });
    return true;
  }

  /** Blanks and line continuations (bash removes `\<newline>` before it splits words). */
  private skipBlanks(): void {
    const s = this.s;
    for (;;) {
      if (BLANK.has(s[this.i] ?? '')) this.i++;
      else if (s[this.i] === '\\' && s[this.i + 1] === '\n') this.i += 2;
      else return;
    }
  }

  private word(): void {
    const atCommandStart = this.cur.words.length === 0;
    const start = this.i;
    const w = this.readWord(atCommandStart);
    if (!w) throw new Opaque(`an unexpected ${JSON.stringify(this.s[this.i])}`);
    // Line continuations are gone before bash looks at a word: `i\<newline>f` is the keyword if.
    const raw = this.s.slice(start, this.i).replace(/\\\n/g, '');
    if (atCommandStart) {
      // Only an unquoted word is a reserved word or an assignment (`"if"` is a command named if).
      if (raw === w.value && RESERVED.has(w.value)) throw new Opaque(`the compound command "${w.value}"`);
      // Negation (changes the exit status only), but only first: `>f !` runs a command named `!`.
      if (raw === '!' && !this.cur.redirects.length && !this.cur.assignments.length) return;
      if (ASSIGNMENT.test(raw)) {
        this.cur.assignments.push(w.value);
        return;
      }
    }
    this.cur.words.push(w);
  }

  /**
   * One word at `i`, with quotes removed; undefined when none starts here. `commandPosition`: where
   * bash would also read an assignment, so `name[` opens a subscript that runs to its `]`, blanks
   * and operators included.
   */
  private readWord(commandPosition = false): Word | undefined {
    const s = this.s;
    let value = '';
    let glob = false;
    let any = false;
    let plain = true;
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (BLANK.has(c) || OPERATOR_START.has(c)) break;
      if (c === '\\') {
        const next = s[this.i + 1];
        if (next === undefined) throw new Opaque('a backslash at the end');
        this.i += 2;
        if (next === '\n') continue; // a line continuation is not a character of the word
        value += next;
        any = true;
        plain = false;
        continue;
      }
      any = true;
      if (c === '[' && commandPosition && plain && /^[A-Za-z_][A-Za-z0-9_]*$/.test(value)) {
        throw new Opaque('an array subscript (name[…])');
      }
      if (c === "'" || c === '"') plain = false;
      if (c === "'") {
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) throw new Opaque('an unterminated single quote');
        value += s.slice(this.i + 1, end);
        this.i = end + 1;
        continue;
      }
      if (c === '"') {
        value += this.doubleQuoted();
        continue;
      }
      if (c === '$') throw new Opaque(dollarWhat(s.slice(this.i, this.i + 2)));
      if (c === '`') throw new Opaque('a command substitution (`…`)');
      if (c === '{') {
        // `{}` is never expanded (find -exec … {}); anything else may be a brace expansion.
        if (s[this.i + 1] !== '}') throw new Opaque('a brace expansion or group ({…})');
        value += '{}';
        this.i += 2;
        continue;
      }
      if (c === '}') throw new Opaque('a brace expansion or group ({…})');
      if ((c === '@' || c === '+' || c === '!' || c === '?' || c === '*') && s[this.i + 1] === '(') {
        throw new Opaque('an extended glob');
      }
      if (GLOB.has(c) || c === '~') glob = true;
      value += c;
      this.i++;
    }
    return any ? { value, glob } : undefined;
  }

  private doubleQuoted(): string {
    const s = this.s;
    let out = '';
    this.i++; // opening quote
    while (this.i < s.length) {
      const c = s[this.i] as string;
      if (c === '"') {
        this.i++;
        return out;
      }
      if (c === '\\') {
        const next = s[this.i + 1];
        if (next === undefined) break;
        // Inside double quotes a backslash escapes only these; before anything else it stays.
        if (next === '$' || next === '`' || next === '"' || next === '\\') out += next;
        else if (next !== '\n') out += c + next;
        this.i += 2;
        continue;
      }
      if (c === '$') throw new Opaque(`${dollarWhat(s.slice(this.i, this.i + 2))} inside double quotes`);
      if (c === '`') throw new Opaque('a command substitution (`…`) inside double quotes');
      out += c;
      this.i++;
    }
    throw new Opaque('an unterminated double quote');
  }
}

function dollarWhat(two: string): string {
  if (two === "$'") return "ANSI-C quoting ($'…')";
  if (two === '$"') return 'locale quoting ($"…")';
  if (two === '$(') return 'a command substitution ($(…))';
  // Built from two parts: a literal dollar-brace reads as a template placeholder to the linter.
  if (two === '${') return `a parameter expansion (${'$'}{…})`;
  return 'a variable or parameter expansion ($…)';
}

function redirectKind(op: string, target: string): RedirectKind {
  if (op === '>&' || op === '<&') {
    // `>&word` with a word that is not a descriptor redirects stdout and stderr to that file.
    if (/^\d+$/.test(target) || target === '-') return 'dup';
    return op === '>&' ? (target === '/dev/null' ? 'null' : 'write') : 'read';
  }
  if (op === '<') return 'read';
  return target === '/dev/null' ? 'null' : 'write';
}
