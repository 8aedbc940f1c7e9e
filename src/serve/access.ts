import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';

/*
 * Who may read a store through `reloop serve`. Two checks, both before any route:
 *
 * - the Host check (DNS rebinding): on a loopback address the server answers only requests
 *   addressed to a loopback name, so a page on another site that rebinds its own name to
 *   127.0.0.1 gets 403. Loopback is every spelling of it — 127.0.0.0/8, ::1, [::1],
 *   ::ffff:127.0.0.1, localhost — for the address served as for the Host asked (issue 18: only
 *   the three spellings 127.0.0.1 / localhost / ::1 turned it on).
 * - the token: a store directory of mode 0700 keeps other local users out of the files, not out of
 *   a port on 127.0.0.1, so every request needs the server's random token (issue 18). The printed
 *   URL carries it once (`?token=`); the server answers that request with an HttpOnly,
 *   SameSite=Strict cookie and a redirect to the same URL without it, so the pages' own requests
 *   (the live viewer's fetch and EventSource, same origin) carry the cookie, while a page on
 *   another site gets no cookie sent (SameSite) and cannot read the token. Scripts send
 *   `Authorization: Bearer <token>`. Compared in constant time.
 */

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether a host name or address (as `--host` or a Host header spells it, brackets too) is loopback. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  const kind = isIP(h);
  // An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is checked against the IPv4 subnet.
  return kind !== 0 && LOOPBACK.check(h, kind === 4 ? 'ipv4' : 'ipv6');
}

/** The host name a request was addressed to: its Host header without the port. */
export function hostOf(req: IncomingMessage): string {
  const raw = req.headers.host ?? '';
  if (raw.startsWith('[')) return raw.slice(0, raw.indexOf(']') + 1);
  return raw.replace(/:\d*$/, '');
}

/** A fresh token: 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time comparison (of the digests: equal lengths, whatever was sent). */
export function sameToken(given: string | undefined | null, token: string): boolean {
  if (typeof given !== 'string' || given.length === 0) return false;
  return timingSafeEqual(digest(given), digest(token));
}

/** The cookie's name: cookies ignore ports, so two servers on one host must not share one. */
export const cookieName = (port: number) => `reloop_token_${port}`;

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

export type Access =
  /** Allowed. */
  | { ok: true }
  /** Allowed by `?token=` on a page: set the cookie and send the browser to `location` without it. */
  | { ok: true; setCookie: string; location: string }
  | { ok: false };

/** Whether `req` carries the token (header, cookie or `?token=`). */
export function checkToken(
  req: IncomingMessage,
  url: URL,
  token: string,
  port: number,
  page: boolean,
): Access {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Bearer ') && sameToken(auth.slice(7).trim(), token)) return { ok: true };
  const name = cookieName(port);
  if (sameToken(cookieOf(req, name), token)) return { ok: true };
  if (!sameToken(url.searchParams.get('token'), token)) return { ok: false };
  if (!page) return { ok: true };
  const clean = new URL(url);
  clean.searchParams.delete('token');
  return {
    ok: true,
    setCookie: `${name}=${token}; Path=/; HttpOnly; SameSite=Strict`,
    location: `${clean.pathname}${clean.search}`,
  };
}
