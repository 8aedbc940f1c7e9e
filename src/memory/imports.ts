/**
 * `@path` imports of a CLAUDE.md, as Claude Code finds them: an `@` at the start of a line or
 * after a blank, followed by a path (`\ ` escapes a space); never inside a fenced code block or
 * an inline code span, so `` `@scope/pkg` `` and code samples are not imports.
 */
const IMPORT = /(?:^|\s)@((?:[^\s\\]|\\ )+)/g;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

export function importPaths(text: string): string[] {
  const out: string[] = [];
  let fence: string | null = null;
  for (const line of text.split(/\r?\n/)) {
    const f = FENCE.exec(line);
    if (fence !== null) {
      // A fence closes with the same character, at least as long, and nothing else on the line.
      if (f && f[1]![0] === fence[0] && f[1]!.length >= fence.length && line.trim() === f[1]) fence = null;
      continue;
    }
    if (f) {
      fence = f[1]!;
      continue;
    }
    for (const m of withoutCodeSpans(line).matchAll(IMPORT)) {
      const p = m[1]!.replace(/\\ /g, ' ').replace(/[.,;:!?)\]]+$/, '');
      if (looksLikePath(p)) out.push(p);
    }
  }
  return out;
}

/** The line with each `` `…` `` span blanked (a run of n backticks closes with a run of n). */
function withoutCodeSpans(line: string): string {
  return line.replace(/(`+)[^`]*?(?:`(?!\1)[^`]*?)*?\1/g, (s) => ' '.repeat(s.length));
}

/** Claude Code's test: `./x`, `~/x`, `/x`, or a name starting with a letter, digit, `.`, `_` or `-`. */
function looksLikePath(p: string): boolean {
  if (p === '' || p === '/' || p.startsWith('@')) return false;
  return p.startsWith('./') || p.startsWith('~/') || p.startsWith('/') || /^[A-Za-z0-9._-]/.test(p);
}
