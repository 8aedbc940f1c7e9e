import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, Tool as SdkTool } from '@modelcontextprotocol/sdk/types.js';
import { messageOf } from '../lib/errors.ts';
import { type McpServerConfig, transportOf } from './config.ts';

/** Something an in-process server can be linked to (the SDK's `McpServer` or low-level `Server`). */
export interface InProcessServer {
  connect(transport: Transport): Promise<void>;
}

/** How a server is reached: a configuration, or an in-process server (`{ type: 'sdk', instance }`). */
export type McpServerSpec = McpServerConfig | { type: 'sdk'; instance: InProcessServer };

export type McpTransportKind = 'stdio' | 'http' | 'sse' | 'sdk';

export function transportKind(spec: McpServerSpec): McpTransportKind {
  return 'type' in spec && spec.type === 'sdk' ? 'sdk' : transportOf(spec as McpServerConfig);
}

/** What a server said about one of its tools (tools/list), as the log keeps it. */
export interface McpToolInfo {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

export interface ConnectOptions {
  /** Working directory of a stdio server. */
  cwd: string;
  /** Environment of a stdio server before its own `env`: the runtime's without secrets (childEnv). */
  env: NodeJS.ProcessEnv;
  /** initialize and tools/list, each (MCP_TIMEOUT). */
  startupTimeoutMs: number;
  /** Largest message a stdio server may send; past it the server is disconnected. */
  maxMessageBytes: number;
  clientInfo: { name: string; version: string };
}

/** A server that could not be started, connected or listed. */
export class McpStartError extends Error {
  readonly code = 'MCP_START_FAILED';
  constructor(
    readonly server: string,
    readonly detail: string,
  ) {
    super(`MCP server ${JSON.stringify(server)} failed to start: ${detail}`);
    this.name = 'McpStartError';
  }
}

const MAX_TOOL_PAGES = 100;
const STDERR_TAIL = 2000;

/**
 * One connected server, through the SDK's Client. It notices when the server goes away (its
 * process exits, its stream closes, it breaks the protocol) and keeps why: a call after that,
 * or in flight then, fails naming the server and the reason.
 */
export class McpConnection {
  private closedWhy: string | null = null;
  private readonly closeListeners: ((why: string) => void)[] = [];
  private stderrTail = '';
  private closing = false;

  private constructor(
    readonly name: string,
    readonly kind: McpTransportKind,
    private readonly client: Client,
  ) {}

  static async connect(name: string, spec: McpServerSpec, opts: ConnectOptions): Promise<McpConnection> {
    const kind = transportKind(spec);
    const client = new Client(opts.clientInfo, { capabilities: {} });
    let transport: Transport;
    let serverSide: InProcessServer | undefined;
    try {
      if ('type' in spec && spec.type === 'sdk') {
        const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
        transport = clientEnd;
        serverSide = spec.instance;
        await serverSide.connect(serverEnd);
      } else if ('command' in spec) {
        transport = new StdioClientTransport({
          command: spec.command,
          args: spec.args ?? [],
          env: definedOnly({ ...opts.env, ...spec.env }),
          cwd: opts.cwd,
          stderr: 'pipe',
          maxBufferSize: opts.maxMessageBytes,
        });
      } else if (spec.type === 'sse') {
        transport = new SSEClientTransport(new URL(spec.url), {
          requestInit: { headers: spec.headers ?? {} },
          eventSourceInit: {
            fetch: (u, init) => fetch(u, { ...init, headers: { ...init?.headers, ...spec.headers } }),
          },
        });
      } else {
        transport = new StreamableHTTPClientTransport(new URL(spec.url), {
          requestInit: { headers: spec.headers ?? {} },
        });
      }
    } catch (e) {
      throw new McpStartError(name, messageOf(e));
    }
    const conn = new McpConnection(name, kind, client);
    if (transport instanceof StdioClientTransport) {
      transport.stderr?.on('data', (chunk: Buffer | string) => {
        conn.stderrTail = (conn.stderrTail + String(chunk)).slice(-STDERR_TAIL);
      });
    }
    client.onclose = () => conn.markClosed(conn.exitReason('the connection closed'));
    // Until initialize is answered, an error is only noted: how the start failed is told below.
    let early: unknown;
    client.onerror = (e) => {
      early ??= e;
    };
    // A process that exits before it answers ends the start at once, not at the timeout.
    const gone = new Promise<never>((_, reject) => conn.onClose((why) => reject(new ClosedEarly(why))));
    gone.catch(() => {});
    try {
      await Promise.race([client.connect(transport, { timeout: opts.startupTimeoutMs }), gone]);
    } catch (e) {
      const spawnFailed = (early as { code?: unknown } | undefined)?.code === 'ENOENT';
      const why = spawnFailed
        ? `command not found: ${'command' in spec ? spec.command : ''}`
        : (conn.closedWhy ?? startFailure(e, opts.startupTimeoutMs, conn.exitReason('')));
      await conn.close();
      throw new McpStartError(name, why);
    }
    // A stdio server must write nothing but MCP messages on stdout (the spec's MUST): a message
    // that does not parse, or one past the size cap, means it cannot be trusted to answer.
    client.onerror = (e) => {
      if (kind !== 'stdio' || conn.closedWhy || conn.closing) return;
      conn.markClosed(`it broke the protocol: ${clip(messageOf(e))}`);
      void transport.close().catch(() => {});
    };
    return conn;
  }

  get serverInfo(): { name: string; version: string } | null {
    const v = this.client.getServerVersion();
    return v ? { name: v.name, version: v.version } : null;
  }

  /** Why the server is gone, or null while it is connected. */
  get closed(): string | null {
    return this.closedWhy;
  }

  onClose(listener: (why: string) => void): void {
    this.closeListeners.push(listener);
  }

  /** Every tool the server offers, all pages of tools/list. */
  async listTools(timeoutMs: number): Promise<McpToolInfo[]> {
    if (!this.client.getServerCapabilities()?.tools) return [];
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      let res: { tools: SdkTool[]; nextCursor?: string };
      try {
        res = await this.client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs });
      } catch (e) {
        throw new McpStartError(this.name, `tools/list: ${this.closedWhy ?? startFailure(e, timeoutMs, '')}`);
      }
      for (const t of res.tools) out.push(toolInfo(t));
      cursor = res.nextCursor;
      if (!cursor) return out;
    }
    throw new McpStartError(this.name, `tools/list: more than ${MAX_TOOL_PAGES} pages`);
  }

  /** tools/call; an abort of `signal` cancels it (notifications/cancelled, through the SDK). */
  async call(
    tool: string,
    args: Record<string, unknown>,
    opts: { signal: AbortSignal; timeoutMs: number },
  ): Promise<CallToolResult> {
    return (await this.client.callTool({ name: tool, arguments: args }, undefined, {
      signal: opts.signal,
      timeout: opts.timeoutMs,
    })) as CallToolResult;
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    try {
      await this.client.close();
    } catch {
      // Closing a server that is already gone is not a failure.
    }
    this.markClosed(this.closedWhy ?? 'the session closed it');
  }

  private markClosed(why: string): void {
    if (this.closedWhy) return;
    this.closedWhy = why;
    for (const l of this.closeListeners) l(why);
  }

  /** Why a process went away, with the last thing it wrote on stderr. */
  private exitReason(fallback: string): string {
    const last = this.stderrTail.trim().split('\n').at(-1)?.trim();
    const base = this.kind === 'stdio' ? 'its process exited' : fallback || 'the connection closed';
    return last ? `${base} (stderr: ${clip(last)})` : base;
  }
}

class ClosedEarly extends Error {}

function startFailure(e: unknown, timeoutMs: number, exited: string): string {
  const code = (e as { code?: unknown })?.code;
  if (code === -32001) return `no answer within ${timeoutMs} ms (MCP_TIMEOUT)`;
  if (code === -32000) return exited || 'the connection closed before it answered';
  if (code === 'ENOENT') return `command not found (${messageOf(e)})`;
  return clip(messageOf(e));
}

function toolInfo(t: SdkTool): McpToolInfo {
  const annotations = t.annotations
    ? Object.fromEntries(
        Object.entries(t.annotations).filter(([k]) =>
          ['title', 'readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'].includes(k),
        ),
      )
    : undefined;
  return {
    name: t.name,
    ...(t.description !== undefined ? { description: t.description } : {}),
    inputSchema: t.inputSchema as Record<string, unknown>,
    ...(annotations && Object.keys(annotations).length ? { annotations } : {}),
  };
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

function clip(s: string): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > 300 ? `${one.slice(0, 300)}…` : one;
}
