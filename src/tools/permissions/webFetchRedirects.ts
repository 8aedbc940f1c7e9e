import { allowMatch, denyMatches, parseRules } from './rules.ts';

/**
 * Whether WebFetch may follow a redirect to another host by itself: only when an allow rule
 * names that host (`WebFetch`, `WebFetch(domain:…)`) and no deny rule does. Otherwise the model
 * is told of the redirect and fetches the new URL in a call of its own, which the policy checks.
 */
export function fetchRedirectPolicy(
  allow: readonly string[],
  deny: readonly string[],
  cwd: string,
): (url: URL) => boolean {
  const allowed = parseRules(allow).filter((r) => r.tool === 'WebFetch' && r.kind !== 'path');
  const denied = parseRules(deny).filter((r) => r.tool === 'WebFetch');
  return (url) => {
    const subject = { tool: 'WebFetch', host: url.hostname.toLowerCase() };
    if (denied.some((r) => denyMatches(r, subject, cwd))) return false;
    return allowMatch(allowed, subject) !== undefined;
  };
}
