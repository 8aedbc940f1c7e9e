/**
 * `WebFetch(domain:…)` rules, as Claude Code writes them: `domain:example.com` is that host
 * exactly (case-insensitive, a trailing dot ignored), `domain:*.example.com` its subdomains,
 * `domain:*` any host. A deny rule matches generously (`*.example.com` denies example.com too),
 * an allow rule strictly — the same lean as every other rule here.
 */

/** The host a WebFetch input would reach, lower-cased; undefined when the url does not parse. */
export function fetchHost(input: unknown): string | undefined {
  const url = (input as { url?: unknown } | null)?.url;
  if (typeof url !== 'string') return undefined;
  try {
    return normalHost(new URL(url).hostname);
  } catch {
    return undefined;
  }
}

function normalHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/\.$/, '')
    .replace(/^\[|\]$/g, '');
}

/** The domain of a `domain:` specifier, checked; a string is what is wrong with it. */
export function parseDomainSpec(spec: string): { domain: string } | string {
  const domain = normalHost(spec.slice('domain:'.length).trim());
  if (domain === '') return 'empty domain after "domain:"';
  if (domain !== '*' && !/^(\*\.)?[a-z0-9_.:-]+$/.test(domain))
    return `"${domain}" is not a host name (e.g. example.com or *.example.com)`;
  if (domain.startsWith('*.') && domain.length === 2) return 'empty domain after "*."';
  return { domain };
}

export function domainMatches(domain: string, host: string, generous: boolean): boolean {
  if (domain === '*') return true;
  const h = normalHost(host);
  if (!domain.startsWith('*.')) return h === domain;
  const apex = domain.slice(2);
  return h.endsWith(`.${apex}`) || (generous && h === apex);
}
