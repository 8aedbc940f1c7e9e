/**
 * GNU sed scripts, read as sed reads them, for the commands and flags that run a command or write a
 * file (`e`, `w`, `W`, `s///e`, `s///w`). programArgs.ts asks this of every script a `sed` call is given.
 */

const SED_PLAIN = new Set([...'pPdDnNgGhHxlz=F{}!qQ']);
const SED_LABEL = new Set([...':btTv']);
const SED_TEXT = new Set([...'aic']);

/**
 * Walks a GNU sed script command by command; anything it does not recognise counts as risky
 * (fail closed). Addresses (`1`, `$`, `/re/`, `\%re%`, `1,3`, `0~4`, `!`) are skipped.
 */
export function sedScriptRisk(s: string): string | undefined {
  let i = 0;
  const n = s.length;
  const skipBlank = () => {
    while (i < n && /[\s;]/.test(s[i] as string)) i++;
  };
  /** Reads a delimited part ending at an unescaped `delim`; false when it never ends. */
  const delimited = (delim: string): boolean => {
    while (i < n) {
      const c = s[i] as string;
      if (c === '\\') i += 2;
      else if (c === delim) {
        i++;
        return true;
      } else if (c === '\n' && delim !== '\n') return false;
      else i++;
    }
    return false;
  };
  const address = (): boolean => {
    const c = s[i];
    if (c === '/') {
      i++;
      return delimited('/');
    }
    if (c === '\\') {
      const d = s[i + 1];
      if (d === undefined) return false;
      i += 2;
      return delimited(d);
    }
    while (i < n && /[0-9$~+]/.test(s[i] as string)) i++;
    return true;
  };
  for (;;) {
    skipBlank();
    if (i >= n) return undefined;
    if (s[i] === '#') {
      while (i < n && s[i] !== '\n') i++;
      continue;
    }
    if (!address()) return 'an address sed would read differently';
    if (s[i] === ',') {
      i++;
      if (!address()) return 'an address sed would read differently';
    }
    while (s[i] === ' ' || s[i] === '!') i++;
    const cmd = s[i];
    if (cmd === undefined) return undefined;
    i++;
    if (cmd === 'e' || cmd === 'w' || cmd === 'W')
      return `the ${cmd} command runs a command or writes a file`;
    if (cmd === 'r' || cmd === 'R' || SED_TEXT.has(cmd) || SED_LABEL.has(cmd)) {
      // Arguments run to the end of the line (labels and file names may end at `;` too; either way
      // nothing after them on this line is a command we would miss being risky about). The text of
      // a, i and c goes on over lines that end with a backslash.
      for (;;) {
        while (i < n && s[i] !== '\n') i++;
        if (!SED_TEXT.has(cmd) || s[i - 1] !== '\\' || i >= n) break;
        i++;
      }
      continue;
    }
    if (cmd === 'l' || cmd === 'q' || cmd === 'Q' || cmd === 'L') {
      while (i < n && /[ 0-9]/.test(s[i] as string)) i++;
      continue;
    }
    if (SED_PLAIN.has(cmd)) continue;
    if (cmd === 's' || cmd === 'y') {
      const d = s[i];
      if (d === undefined || d === '\n' || d === '\\') return 'a substitution sed would read differently';
      i++;
      if (!delimited(d) || !delimited(d)) return 'an unterminated substitution';
      if (cmd === 's') {
        const flags = /^[0-9gpIiMmew]*/.exec(s.slice(i))?.[0] ?? '';
        const risky = /[ew]/.exec(flags);
        if (risky) return `the ${risky[0]} flag of s runs a command or writes a file`;
        i += flags.length;
      }
      continue;
    }
    return `a command (${cmd}) reloop does not check`;
  }
}
