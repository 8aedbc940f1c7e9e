/**
 * A loopback stand-in for the Anthropic Messages API, good enough for the real SDK.
 *
 *   const server = await startMessagesServer();
 *   const client = new AnthropicModelClient({ apiKey: 'sk-test-SECRET', baseURL: server.url });
 *   server.enqueue(textReply('hello'), httpError(529, 'overloaded_error', 'Overloaded'));
 *   ... drive the client ...
 *   expect(server.requests[0]?.body.max_tokens).toBe(1024);
 *   await server.close();
 *
 * Each `POST /v1/messages` takes the next reply off the queue (FIFO) or, when the queue is
 * empty, the `fallback` reply; with neither it answers 418, which the client classifies as
 * fatal, so a test that under-scripts fails fast instead of retrying. A reply is data or a
 * function of the recorded request. Kinds:
 *   - `message`      a response: content blocks, stop reason, usage. Streamed as SSE when the
 *                    body says `stream: true` (text/thinking/tool input split into deltas of
 *                    `chunkSize` characters), plain JSON otherwise.
 *   - `http_error`   an error status with the API's error body and any headers
 *                    (`retry-after`, `retry-after-ms`, `x-should-retry`).
 *   - `stream_error` a 200 stream that sends `afterEvents` events of `partial` (default: a
 *                    short text reply), then `event: error`.
 *   - `drop`         like `stream_error`, but the socket is destroyed instead.
 *   - `hold`         sends `afterEvents` events, then keeps the stream open until the client
 *                    goes away (for abort tests) or the server closes.
 *   - `raw`          any status, content type and body, as is (a proxy's HTML page, say).
 * A `message` with `usage: null` has no usage at all (neither in message_start nor in
 * message_delta), as some servers that are not the Messages API answer.
 * Authentication: any non-empty `x-api-key` or `Authorization: Bearer` key (or exactly
 * `apiKey` when given to start); otherwise 401. Every request is recorded, authorised or not.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReplyBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature?: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | ({ type: string } & Record<string, unknown>);

export interface ReplyUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export interface MessageReply {
  kind: 'message';
  content: ReplyBlock[];
  /** Default `end_turn`, or `tool_use` when a tool_use block is present. */
  stopReason?: string | null;
  /** `null`: no usage object anywhere in the reply. */
  usage?: Partial<ReplyUsage> | null;
  /** Default: the model named in the request. */
  model?: string;
  id?: string;
  /** Characters per delta event (default 5), so tests see several deltas per block. */
  chunkSize?: number;
  /** Pause between SSE events (default 0). */
  eventDelayMs?: number;
}
export interface HttpErrorReply {
  kind: 'http_error';
  status: number;
  errorType: string;
  message: string;
  headers?: Record<string, string>;
}
export interface StreamFailureReply {
  kind: 'stream_error' | 'drop' | 'hold';
  /** Events of `partial` sent before the failure (default 3: message_start, ping, first block start). */
  afterEvents?: number;
  partial?: MessageReply;
  /** For `stream_error`: the error event's type and message (default overloaded_error / Overloaded). */
  errorType?: string;
  message?: string;
}
export interface RawReply {
  kind: 'raw';
  status: number;
  contentType: string;
  body: string;
}
export type ScriptedReply = MessageReply | HttpErrorReply | StreamFailureReply | RawReply;
export type Reply = ScriptedReply | ((request: RecordedRequest) => ScriptedReply);

export interface RecordedBody {
  model?: string;
  max_tokens?: number;
  stream?: boolean;
  system?: unknown;
  messages?: { role: string; content: unknown }[];
  tools?: { name: string; description?: string; input_schema?: unknown }[];
  [key: string]: unknown;
}
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** Parsed JSON body (`{}` when the body was empty or not JSON). */
  body: RecordedBody;
}

export interface MessagesServer {
  /** Base URL for the SDK (`baseURL` / `ANTHROPIC_BASE_URL`), e.g. `http://127.0.0.1:54321`. */
  url: string;
  requests: RecordedRequest[];
  enqueue(...replies: Reply[]): void;
  /** Replies still queued. */
  pending(): number;
  close(): Promise<void>;
}

export interface MessagesServerOptions {
  /** Require exactly this key; by default any non-empty key is accepted. */
  apiKey?: string;
  /** Used whenever the queue is empty (e.g. a CLI test that loops on one answer). */
  fallback?: Reply;
}

export function textReply(text: string, options: Partial<MessageReply> = {}): MessageReply {
  return { kind: 'message', content: [{ type: 'text', text }], ...options };
}
export function toolUseReply(
  name: string,
  input: unknown,
  options: Partial<MessageReply> & { toolUseId?: string; text?: string } = {},
): MessageReply {
  const { toolUseId = `toolu_${name}_1`, text, ...rest } = options;
  const tool: ReplyBlock = { type: 'tool_use', id: toolUseId, name, input };
  return { kind: 'message', content: text ? [{ type: 'text', text }, tool] : [tool], ...rest };
}
export function httpError(
  status: number,
  errorType: string,
  message: string,
  headers?: Record<string, string>,
): HttpErrorReply {
  return { kind: 'http_error', status, errorType, message, ...(headers ? { headers } : {}) };
}

type Sse = { event: string; data: unknown };

function chunks(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length > 0 ? out : [''];
}

function blockEvents(block: ReplyBlock, index: number, size: number): Sse[] {
  const delta = (d: Record<string, unknown>): Sse => ({
    event: 'content_block_delta',
    data: { type: 'content_block_delta', index, delta: d },
  });
  let start: Record<string, unknown> = { ...block };
  let deltas: Sse[] = [];
  if (block.type === 'text' && typeof block.text === 'string') {
    start = { type: 'text', text: '' };
    deltas = chunks(block.text, size).map((text) => delta({ type: 'text_delta', text }));
  } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
    start = { type: 'thinking', thinking: '', signature: '' };
    deltas = chunks(block.thinking, size).map((thinking) => delta({ type: 'thinking_delta', thinking }));
    deltas.push(delta({ type: 'signature_delta', signature: String(block.signature ?? 'sig') }));
  } else if (block.type === 'tool_use') {
    start = { type: 'tool_use', id: block.id, name: block.name, input: {} };
    deltas = chunks(JSON.stringify(block.input ?? {}), size).map((partial_json) =>
      delta({ type: 'input_json_delta', partial_json }),
    );
  }
  return [
    { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } },
    ...deltas,
    { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
  ];
}

function messageOf(reply: MessageReply, body: RecordedBody, n: number) {
  const hasTool = reply.content.some((b) => b.type === 'tool_use');
  return {
    id: reply.id ?? `msg_test_${n}`,
    type: 'message',
    role: 'assistant',
    model: reply.model ?? body.model ?? 'claude-test',
    content: reply.content,
    stop_reason: reply.stopReason === undefined ? (hasTool ? 'tool_use' : 'end_turn') : reply.stopReason,
    stop_sequence: null,
    usage:
      reply.usage === null
        ? undefined
        : {
            input_tokens: 10,
            output_tokens: 5,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            ...reply.usage,
          },
  };
}

function streamEvents(reply: MessageReply, body: RecordedBody, n: number): Sse[] {
  const message = messageOf(reply, body, n);
  const { output_tokens, ...startUsage } = message.usage ?? { output_tokens: undefined };
  const usage = message.usage ? { usage: { ...startUsage, output_tokens: 1 } } : {};
  return [
    {
      event: 'message_start',
      data: {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, ...usage },
      },
    },
    { event: 'ping', data: { type: 'ping' } },
    ...reply.content.flatMap((b, i) => blockEvents(b, i, reply.chunkSize ?? 5)),
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: message.stop_reason, stop_sequence: null },
        ...(message.usage ? { usage: { output_tokens } } : {}),
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

const sse = (e: Sse) => `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
const errorBody = (type: string, message: string) => ({ type: 'error', error: { type, message } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function answer(reply: ScriptedReply, req: RecordedRequest, res: ServerResponse, n: number) {
  const requestId = { 'request-id': `req_test_${n}` };
  if (reply.kind === 'raw') {
    res.writeHead(reply.status, { 'content-type': reply.contentType, ...requestId });
    return res.end(reply.body);
  }
  if (reply.kind === 'http_error') {
    const headers = { ...requestId, ...reply.headers };
    return sendJson(res, reply.status, errorBody(reply.errorType, reply.message), headers);
  }
  if (reply.kind === 'message' && !req.body.stream) {
    return sendJson(res, 200, messageOf(reply, req.body, n), requestId);
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', ...requestId });
  // A client that went away (abort) must not leave the writer waiting for a callback.
  const write = (chunk: string) =>
    new Promise<void>((resolve) => (res.destroyed ? resolve() : res.write(chunk, () => resolve())));
  if (reply.kind === 'message') {
    for (const e of streamEvents(reply, req.body, n)) {
      if (res.destroyed) return;
      await write(sse(e));
      if (reply.eventDelayMs) await sleep(reply.eventDelayMs);
    }
    return res.end();
  }
  const partial = reply.partial ?? textReply('Partial answer that never finishes.');
  for (const e of streamEvents(partial, req.body, n).slice(0, reply.afterEvents ?? 3)) await write(sse(e));
  if (reply.kind === 'stream_error') {
    const error = errorBody(reply.errorType ?? 'overloaded_error', reply.message ?? 'Overloaded');
    await write(sse({ event: 'error', data: error }));
    res.end();
  } else if (reply.kind === 'drop') {
    res.socket?.destroy();
  }
  // `hold`: leave the response open; the client's abort or close() ends it.
}

export async function startMessagesServer(options: MessagesServerOptions = {}): Promise<MessagesServer> {
  const queue: Reply[] = [];
  const requests: RecordedRequest[] = [];

  const server = createServer(async (incoming, res) => {
    const raw: Buffer[] = [];
    for await (const chunk of incoming) raw.push(chunk as Buffer);
    let body: RecordedBody = {};
    try {
      const parsed: unknown = JSON.parse(Buffer.concat(raw).toString('utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as RecordedBody;
    } catch {
      // Recorded as {}; the reply below decides what the client sees.
    }
    const path = (incoming.url ?? '/').split('?')[0] ?? '/';
    const req: RecordedRequest = { method: incoming.method ?? 'GET', path, headers: incoming.headers, body };
    requests.push(req);
    const n = requests.length;

    const bearer = /^Bearer\s+(.+)$/i.exec(incoming.headers.authorization ?? '')?.[1];
    const xKey = incoming.headers['x-api-key'];
    const key = bearer ?? (typeof xKey === 'string' ? xKey : undefined);
    if (!key || (options.apiKey !== undefined && key !== options.apiKey)) {
      return sendJson(res, 401, errorBody('authentication_error', 'invalid x-api-key'));
    }
    if (req.method !== 'POST' || path !== '/v1/messages') {
      return sendJson(res, 404, errorBody('not_found_error', `No route for ${req.method} ${path}`));
    }
    const next = queue.shift() ?? options.fallback;
    if (!next) {
      const message = `messagesServer: no scripted reply left for request #${n}`;
      return sendJson(res, 418, errorBody('invalid_request_error', message));
    }
    try {
      await answer(typeof next === 'function' ? next(req) : next, req, res, n);
    } catch (err) {
      // A throwing reply function is a test bug: a non-retryable status makes it surface at once.
      const message = `messagesServer: reply threw: ${String(err)}`;
      if (!res.headersSent) sendJson(res, 418, errorBody('invalid_request_error', message));
      else res.destroy();
    }
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        // Held streams and keep-alive sockets would otherwise keep close() waiting forever.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
