/**
 * Whether a glob pattern (Glob's `pattern`, Grep's `glob`) could climb out of the directory it
 * is matched in. The glob library treats a leading `..` — after brace expansion, so `..{,}/x`
 * and `.{,.}/x` too — as "start the crawl in the parent", and an absolute pattern as "crawl
 * there". The tools never list a directory outside their root anyway (confinedDirReader); this
 * check turns such a pattern into a clear refusal up front, in the policy and in the tool.
 */

/** Past this many alternatives a pattern is refused: expanding it is already a denial of service. */
export const MAX_BRACE_EXPANSIONS = 1024;

export type PatternVerdict = { ok: true } | { ok: false; why: string };

const MAX_PATTERN_CHARS = 4096;

export function checkGlobPattern(pattern: string): PatternVerdict {
  if (pattern.length > MAX_PATTERN_CHARS)
    return { ok: false, why: `it is longer than ${MAX_PATTERN_CHARS} characters` };
  if (pattern.includes('\0')) return { ok: false, why: 'it contains a NUL character' };
  const expanded = expandBraces(pattern, MAX_BRACE_EXPANSIONS);
  if (!expanded) return { ok: false, why: `its braces expand to more than ${MAX_BRACE_EXPANSIONS} patterns` };
  for (const alt of expanded) {
    const plain = unescapeGlob(alt);
    if (
      plain.startsWith('/') ||
      plain.startsWith('\\') ||
      /^[A-Za-z]:/.test(plain) ||
      plain.startsWith('~')
    ) {
      return { ok: false, why: 'it is absolute; set path to search elsewhere' };
    }
    if (plain.startsWith('..') || plain.split(/[\\/]+/).some((seg) => seg === '..')) {
      return { ok: false, why: 'it contains ".." (after brace expansion); set path to search elsewhere' };
    }
  }
  return { ok: true };
}

function unescapeGlob(s: string): string {
  return s.replace(/\\(.)/gs, '$1');
}

/**
 * Bash-style expansion of comma lists in braces, nested, honouring backslash escapes. `{a..b}`
 * ranges are left as they are (they cannot produce a path separator or a `..` segment on their
 * own; a `..` inside one is caught as text by the caller only if it ends up a whole segment).
 * Undefined when the result would exceed `limit` alternatives.
 */
export function expandBraces(pattern: string, limit: number): string[] | undefined {
  const open = findBraceGroup(pattern);
  if (!open) return [pattern];
  const { start, end, parts } = open;
  const prefix = pattern.slice(0, start);
  const suffix = pattern.slice(end + 1);
  const out: string[] = [];
  for (const part of parts) {
    const sub = expandBraces(prefix + part + suffix, limit - out.length);
    if (!sub) return undefined;
    out.push(...sub);
    if (out.length > limit) return undefined;
  }
  return out;
}

/** The first brace group with at least one top-level comma, and its comma-separated parts. */
function findBraceGroup(s: string): { start: number; end: number; parts: string[] } | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (c !== '{') continue;
    let depth = 0;
    const commas: number[] = [];
    for (let j = i; j < s.length; j++) {
      const d = s[j];
      if (d === '\\') {
        j++;
        continue;
      }
      if (d === '{') depth++;
      else if (d === '}') {
        depth--;
        if (depth === 0) {
          if (commas.length === 0) break; // `{x}` or a range: literal here, look further on
          const parts: string[] = [];
          let from = i + 1;
          for (const k of commas) {
            parts.push(s.slice(from, k));
            from = k + 1;
          }
          parts.push(s.slice(from, j));
          return { start: i, end: j, parts };
        }
      } else if (d === ',' && depth === 1) commas.push(j);
    }
  }
  return undefined;
}
