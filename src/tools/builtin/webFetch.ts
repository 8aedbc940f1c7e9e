import TurndownService from 'turndown';
import { z } from 'zod';
import { messageOf } from '../../lib/errors.ts';
import type { Tool, ToolContext, ToolOutput } from '../types.ts';
import { toolError } from './common.ts';

export const WEBFETCH_TIMEOUT_MS = 60_000;
/** What is read of a response body at most (Claude Code's cap too). */
export const WEBFETCH_MAX_BYTES = 10 * 1024 * 1024;
/** The converted page returned at most. */
export const WEBFETCH_MAX_CHARS = 100_000;
const MAX_URL_CHARS = 2000;
const MAX_REDIRECTS = 10;

export const WebFetchInput = z.object({
  url: z.url({ protocol: /^https?$/ }).describe('The URL to fetch content from'),
  prompt: z.string().describe('The prompt to run on the fetched content'),
});
export type WebFetchInput = z.infer<typeof WebFetchInput>;

const description = `Fetches a URL (http or https) and returns its content, HTML converted to markdown, together with your prompt, so you can answer the prompt from the page.

- Takes a URL and a prompt (what you want to learn from the page).
- HTML is converted to markdown; text, JSON and XML are returned as they are; other content types (images, PDFs, archives) are refused.
- At most ${WEBFETCH_MAX_BYTES / 1024 / 1024} MiB are read and ${WEBFETCH_MAX_CHARS} characters returned; ${WEBFETCH_TIMEOUT_MS / 1000} s per fetch.
- When the URL redirects to a different host, the tool does not follow it: it tells you the redirect URL, and you make a new WebFetch call with it.
- The tool is read-only but reaches the network: the permission rules decide per domain (WebFetch(domain:example.com)).`;

/** A fetched page, before it is turned into the call's result. */
export interface FetchedPage {
  url: string;
  status: number;
  contentType: string;
  bytes: number;
  /** The content as text: markdown for HTML, as served otherwise, capped. */
  text: string;
  truncatedChars: number;
}

export interface WebFetchToolOptions {
  timeoutMs?: number;
  maxBytes?: number;
  maxChars?: number;
  /**
   * Whether a redirect to another host may be followed without asking the model to fetch it
   * itself (the CLI: when an allow rule `WebFetch(domain:…)` covers the new host). Default: never.
   */
  redirectAllowed?: (url: URL) => boolean;
  /**
   * What becomes of the page. Claude Code runs a small model over it with the prompt; reloop by
   * default returns the page and the prompt to the model that asked (pageWithPrompt). A library
   * user may pass a function that asks a small model instead (its usage in the output counts).
   */
  process?: (page: FetchedPage, prompt: string, signal: AbortSignal) => Promise<ToolOutput>;
}

let turndown: TurndownService | undefined;

function toMarkdown(html: string): string {
  turndown ??= new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }).remove([
    'script',
    'style',
    'noscript',
    'iframe',
  ]);
  return turndown.turndown(html);
}

/** Same host (www. aside), same scheme and port, no credentials: Claude Code follows these by itself. */
function sameSite(from: URL, to: URL): boolean {
  const bare = (h: string) => h.replace(/^www\./, '');
  return (
    from.protocol === to.protocol &&
    from.port === to.port &&
    bare(from.hostname) === bare(to.hostname) &&
    to.username === '' &&
    to.password === ''
  );
}

function redirectNotice(
  from: string,
  to: string,
  status: number,
  statusText: string,
  prompt: string,
): string {
  return [
    'REDIRECT DETECTED: The URL redirects to a different host.',
    '',
    `Original URL: ${from}`,
    `Redirect URL: ${to}`,
    `Status: ${status}${statusText ? ` ${statusText}` : ''}`,
    '',
    'To complete your request, fetch the content from the redirected URL: use WebFetch again with these parameters:',
    `- url: ${JSON.stringify(to)}`,
    `- prompt: ${JSON.stringify(prompt)}`,
  ].join('\n');
}

const TEXT_TYPES =
  /^(text\/|application\/(json|xml|xhtml\+xml|javascript|ld\+json|rss\+xml|atom\+xml)|[^;]*\+(json|xml))/i;

/** Reads at most `max` bytes of the body; more is an error, not a silent cut (a cut page misleads). */
async function readCapped(res: Response, max: number): Promise<Buffer | string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > max) {
    await res.body?.cancel().catch(() => {});
    return `the response is ${declared} bytes, over the ${max}-byte limit`;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => {});
      return `the response is over the ${max}-byte limit`;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** The default result: the page with the prompt it is for (reloop runs no second model). */
export function pageWithPrompt(page: FetchedPage, prompt: string): ToolOutput {
  const cut = page.truncatedChars > 0 ? `\n\n[… ${page.truncatedChars} more characters not shown]` : '';
  return {
    content:
      `Fetched ${page.url} (${page.status}, ${page.contentType || 'no content type'}, ${page.bytes} bytes).\n` +
      `Answer this from the content below: ${prompt}\n\n---\n\n${page.text}${cut}`,
  };
}

export function webFetchTool(opts: WebFetchToolOptions = {}): Tool<WebFetchInput> {
  const timeoutMs = opts.timeoutMs ?? WEBFETCH_TIMEOUT_MS;
  return {
    name: 'WebFetch',
    description,
    inputSchema: WebFetchInput,
    // It reaches the network (a URL can carry data out): asked in default mode, like a change.
    isReadOnly: false,
    isConcurrencySafe: () => true,
    timeoutMs: timeoutMs + 5_000,
    async call(input, ctx) {
      if (input.url.length > MAX_URL_CHARS)
        return toolError(`The URL is longer than ${MAX_URL_CHARS} characters.`);
      const start = new URL(input.url);
      if (start.username || start.password)
        return toolError('URLs with a user name or password are refused.');
      const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(timeoutMs)]);
      try {
        return await fetchPage(input, start, ctx, signal, opts);
      } catch (e) {
        if (ctx.signal.aborted) return toolError(`WebFetch of ${input.url} was aborted.`);
        if (signal.aborted)
          return toolError(`WebFetch of ${input.url} timed out after ${timeoutMs / 1000} s.`);
        const cause = (e as { cause?: unknown })?.cause;
        return toolError(`WebFetch of ${input.url} failed: ${messageOf(cause ?? e)}`);
      }
    },
  };
}

async function fetchPage(
  input: WebFetchInput,
  start: URL,
  ctx: ToolContext,
  signal: AbortSignal,
  opts: WebFetchToolOptions,
): Promise<ToolOutput> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const res = await fetch(url, {
      redirect: 'manual',
      signal,
      headers: { accept: 'text/markdown, text/html;q=0.9, */*;q=0.8', 'user-agent': 'reloop-WebFetch' },
    });
    if (res.status >= 300 && res.status < 400 && res.headers.has('location')) {
      await res.body?.cancel().catch(() => {});
      if (hop >= MAX_REDIRECTS)
        return toolError(`WebFetch of ${input.url}: more than ${MAX_REDIRECTS} redirects.`);
      let next: URL;
      try {
        next = new URL(res.headers.get('location') ?? '', url);
      } catch {
        return toolError(`WebFetch of ${url.href}: the redirect's Location does not parse.`);
      }
      if (next.protocol !== 'http:' && next.protocol !== 'https:')
        return toolError(`WebFetch of ${url.href} redirects to ${next.protocol} URL, which is refused.`);
      if (!sameSite(url, next) && !opts.redirectAllowed?.(next))
        return { content: redirectNotice(url.href, next.href, res.status, res.statusText, input.prompt) };
      url = next;
      continue;
    }
    const contentType = res.headers.get('content-type') ?? '';
    const body = await readCapped(res, opts.maxBytes ?? WEBFETCH_MAX_BYTES);
    if (typeof body === 'string') return toolError(`WebFetch of ${url.href}: ${body}.`);
    if (!res.ok) {
      const snippet = decode(body, contentType).slice(0, 500).trim();
      return toolError(
        `WebFetch of ${url.href} failed: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}${snippet ? `\n${snippet}` : ''}`,
      );
    }
    if (contentType && !TEXT_TYPES.test(contentType))
      return toolError(
        `WebFetch of ${url.href}: the content type ${contentType} is not text; it was not read.`,
      );
    const raw = decode(body, contentType);
    const html = /html/i.test(contentType) || (!contentType && /^\s*<(!doctype html|html)/i.test(raw));
    const full = html ? toMarkdown(raw) : raw;
    const max = opts.maxChars ?? WEBFETCH_MAX_CHARS;
    const page: FetchedPage = {
      url: url.href,
      status: res.status,
      contentType,
      bytes: body.byteLength,
      text: full.slice(0, max),
      truncatedChars: Math.max(0, full.length - max),
    };
    return opts.process ? opts.process(page, input.prompt, ctx.signal) : pageWithPrompt(page, input.prompt);
  }
}
