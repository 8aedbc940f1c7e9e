import { describe, expect, it } from 'vitest';
import { webFetchTool } from '../../../src/tools/builtin/webFetch.ts';
import {
  createPermissionPolicy,
  PermissionRuleError,
  parseRule,
} from '../../../src/tools/permissions/index.ts';
import { domainMatches, fetchHost } from '../../../src/tools/permissions/webFetchDomains.ts';
import { fetchRedirectPolicy } from '../../../src/tools/permissions/webFetchRedirects.ts';

const tool = webFetchTool();

async function decide(allow: string[], deny: string[], url: string) {
  const policy = createPermissionPolicy({ mode: 'default', allow, deny, cwd: process.cwd() });
  return policy({ tool, input: { url, prompt: 'p' }, toolUseId: 't', cwd: process.cwd() });
}

describe('WebFetch(domain:…) rules', () => {
  it('parse into domain rules; a bad domain is a rule error', () => {
    expect(parseRule('WebFetch(domain:Example.COM.)')).toMatchObject({
      kind: 'domain',
      domain: 'example.com',
    });
    expect(parseRule('WebFetch(domain:*.example.com)')).toMatchObject({
      kind: 'domain',
      domain: '*.example.com',
    });
    expect(() => parseRule('WebFetch(domain:)')).toThrow(PermissionRuleError);
    expect(() => parseRule('WebFetch(domain:exa mple.com)')).toThrow(/is not a host name/);
  });

  it('match the host exactly, *. its subdomains (allow strictly, deny generously), * any host', () => {
    expect(domainMatches('example.com', 'EXAMPLE.com', false)).toBe(true);
    expect(domainMatches('example.com', 'www.example.com', false)).toBe(false);
    expect(domainMatches('*.example.com', 'a.b.example.com', false)).toBe(true);
    expect(domainMatches('*.example.com', 'example.com', false)).toBe(false);
    expect(domainMatches('*.example.com', 'example.com', true)).toBe(true);
    expect(domainMatches('*.example.com', 'badexample.com', true)).toBe(false);
    expect(domainMatches('*', 'anything.org', false)).toBe(true);
    expect(fetchHost({ url: 'https://Docs.Example.com:8443/x' })).toBe('docs.example.com');
    expect(fetchHost({ url: 'not a url' })).toBeUndefined();
  });

  it('decide the policy: default mode asks with the URL; an allow rule for the host allows; deny wins', async () => {
    expect(await decide([], [], 'https://example.com/a')).toMatchObject({
      behavior: 'ask',
      message: 'Allow WebFetch: https://example.com/a?',
    });
    expect(await decide(['WebFetch(domain:example.com)'], [], 'https://example.com/a')).toEqual({
      behavior: 'allow',
      by: 'cliArg allow WebFetch(domain:example.com)',
    });
    expect((await decide(['WebFetch(domain:example.com)'], [], 'https://evil.com/a')).behavior).toBe('ask');
    expect(
      await decide(['WebFetch'], ['WebFetch(domain:*.example.com)'], 'https://example.com/a'),
    ).toMatchObject({ behavior: 'deny', by: 'cliArg deny WebFetch(domain:*.example.com)' });
  });

  it('a redirect is followed by itself only to a host an allow rule names and no deny rule does', () => {
    const follows = fetchRedirectPolicy(
      ['WebFetch(domain:*.example.com)'],
      ['WebFetch(domain:bad.example.com)'],
      '.',
    );
    expect(follows(new URL('https://docs.example.com/x'))).toBe(true);
    expect(follows(new URL('https://bad.example.com/x'))).toBe(false);
    expect(follows(new URL('https://example.com/x'))).toBe(false);
    expect(fetchRedirectPolicy([], [], '.')(new URL('https://example.com/'))).toBe(false);
  });
});
