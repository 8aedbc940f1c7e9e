import type { RuleSet } from './ruleSet.ts';
import { allowMatch, denyMatches, type PermissionRule, parseRules } from './rules.ts';

type Rules = Pick<RuleSet, 'allow' | 'deny'> & { ask?: readonly PermissionRule[] };

/**
 * Whether WebFetch may follow a redirect to another host by itself: only when an allow rule
 * names that host (`WebFetch`, `WebFetch(domain:…)`) and no deny or ask rule does. Otherwise the
 * model is told of the redirect and fetches the new URL in a call of its own, which the policy
 * checks. The rules are the policy's own (one domain matcher: rules.ts / webFetchDomains.ts);
 * plain strings are `--allow` / `--deny` rules.
 */
export function fetchRedirectPolicy(
  allow: readonly string[] | Rules,
  deny: readonly string[] = [],
  cwd = process.cwd(),
): (url: URL) => boolean {
  const rules: Rules = isStrings(allow) ? { allow: parseRules(allow), deny: parseRules(deny) } : allow;
  const allowed = rules.allow.filter((r) => r.tool === 'WebFetch' && r.kind !== 'path');
  const stops = [...rules.deny, ...(rules.ask ?? [])].filter((r) => r.tool === 'WebFetch');
  return (url) => {
    const subject = { tool: 'WebFetch', host: url.hostname.toLowerCase() };
    if (stops.some((r) => denyMatches(r, subject, cwd))) return false;
    return allowMatch(allowed, subject) !== undefined;
  };
}

function isStrings(v: readonly string[] | Rules): v is readonly string[] {
  return Array.isArray(v);
}
