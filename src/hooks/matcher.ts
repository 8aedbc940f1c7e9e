/**
 * Claude Code's matcher rule: `"*"`, `""` or no matcher matches every occurrence; a matcher of
 * only letters, digits, `_`, `-`, spaces, `,` and `|` is an exact name or a list of exact names
 * (`Edit|Write`, `Edit, Write`); anything else is an unanchored JavaScript regular expression
 * (`mcp__memory__.*`, `^Notebook`). So `Bash` never matches `BashOutput`, and `mcp__memory`
 * alone matches no tool.
 */
export type MatchTest = (value: string | undefined) => boolean;

const EXACT = /^[A-Za-z0-9_\-, |]+$/;

export type CompiledMatcher =
  | { kind: 'all'; test: MatchTest }
  | { kind: 'exact'; names: ReadonlySet<string>; test: MatchTest }
  | { kind: 'regex'; regex: RegExp; test: MatchTest };

export class MatcherSyntaxError extends Error {
  constructor(
    readonly matcher: string,
    readonly detail: string,
  ) {
    super(`invalid matcher regex ${JSON.stringify(matcher)} (${detail})`);
    this.name = 'MatcherSyntaxError';
  }
}

export function compileMatcher(matcher: string | undefined | null): CompiledMatcher {
  if (matcher === undefined || matcher === null || matcher === '' || matcher === '*')
    return { kind: 'all', test: () => true };
  if (EXACT.test(matcher)) {
    const names = new Set(
      matcher
        .split(/[|,]/)
        .map((n) => n.trim())
        .filter((n) => n !== ''),
    );
    // Only separators and spaces: no name at all, so nothing to match.
    return { kind: 'exact', names, test: (v) => v !== undefined && names.has(v) };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(matcher);
  } catch (e) {
    throw new MatcherSyntaxError(matcher, e instanceof Error ? e.message : String(e));
  }
  return { kind: 'regex', regex, test: (v) => v !== undefined && regex.test(v) };
}
