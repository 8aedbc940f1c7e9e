import { messageOf } from '../lib/errors.ts';
import type { AnyTool } from '../tools/types.ts';
import type { McpConfigSource } from './config.ts';
import {
  type ConnectOptions,
  McpConnection,
  type McpServerSpec,
  McpStartError,
  type McpToolInfo,
  type McpTransportKind,
  transportKind,
} from './connection.ts';
import { DEFAULT_MAX_MCP_OUTPUT_TOKENS } from './results.ts';
import { mcpServerPrefix, mcpTool, mcpToolName } from './tools.ts';

/** The source of an in-process server given in code. */
export type McpServerSource = McpConfigSource | 'sdk';

/** A server to start (approved), or one that is not (with why). */
export interface McpServerEntry {
  name: string;
  spec: McpServerSpec;
  source: McpServerSource;
  /** Absent or true: start it. False: it is reported as skipped with `message`. */
  approved?: boolean;
  message?: string;
}

/** What happens to a server, for the log (the runtime records each as an `mcp.server` record). */
export type McpServerEvent =
  | {
      event: 'connected';
      server: string;
      transport: McpTransportKind;
      source: McpServerSource;
      serverInfo: { name: string; version: string } | null;
      tools: McpToolInfo[];
      durationMs: number;
    }
  | {
      event: 'failed';
      server: string;
      transport: McpTransportKind;
      source: McpServerSource;
      message: string;
      durationMs: number;
    }
  | { event: 'skipped'; server: string; source: McpServerSource; message: string }
  | { event: 'closed'; server: string; message: string };

export interface McpLimits {
  /** initialize and tools/list of one server (Claude Code's MCP_TIMEOUT). */
  startupTimeoutMs: number;
  /** One tools/call (MCP_TOOL_TIMEOUT). */
  toolTimeoutMs: number;
  /** One result, in estimated tokens (MAX_MCP_OUTPUT_TOKENS). */
  maxOutputTokens: number;
  /** The largest message a stdio server may send (bytes). */
  maxMessageBytes: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  startupTimeoutMs: 30_000,
  toolTimeoutMs: 10 * 60_000,
  maxOutputTokens: DEFAULT_MAX_MCP_OUTPUT_TOKENS,
  maxMessageBytes: 16 * 1024 * 1024,
};

export class McpLimitError extends Error {
  readonly code = 'MCP_CONFIG_INVALID';
  constructor(name: string, raw: string) {
    super(`${name} must be a whole number ≥ 1, got ${JSON.stringify(raw)}`);
    this.name = 'McpLimitError';
  }
}

/** The limits Claude Code reads from its environment: MCP_TIMEOUT, MCP_TOOL_TIMEOUT, MAX_MCP_OUTPUT_TOKENS. */
export function mcpLimitsFromEnv(env: NodeJS.ProcessEnv, base: McpLimits = DEFAULT_MCP_LIMITS): McpLimits {
  const read = (name: string, fallback: number) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new McpLimitError(name, raw);
    return n;
  };
  return {
    ...base,
    startupTimeoutMs: read('MCP_TIMEOUT', base.startupTimeoutMs),
    toolTimeoutMs: read('MCP_TOOL_TIMEOUT', base.toolTimeoutMs),
    maxOutputTokens: read('MAX_MCP_OUTPUT_TOKENS', base.maxOutputTokens),
  };
}

export interface StartOptions {
  cwd: string;
  /** A stdio server's environment before its own `env` (the runtime's without its secrets). */
  env: NodeJS.ProcessEnv;
  limits?: Partial<McpLimits>;
  /** Each server's events, as they happen (a server that dies later reports `closed` then). */
  onEvent: (e: McpServerEvent) => void;
  clientInfo?: { name: string; version: string };
  now?: () => number;
}

/** What a run was offered of one server (for the recorded setup, issue 21). */
export interface McpServerDescription {
  name: string;
  transport: McpTransportKind;
  source: McpServerSource;
  status: 'connected' | 'failed' | 'skipped' | 'closed';
  serverInfo: { name: string; version: string } | null;
  message?: string;
  tools: { name: string; description: string; inputSchema: Record<string, unknown>; readOnly: boolean }[];
}

/**
 * The MCP servers of a session: started together (each on its own, so one slow or broken server
 * delays or breaks nobody else), their tools as reloop tools, and what became of each. A server
 * that fails to start is reported and left out: the run goes on without its tools, and a call of
 * one gets a clear error (`unavailable`).
 */
export class McpServers {
  private readonly connections: McpConnection[] = [];
  private readonly builtTools: AnyTool[] = [];
  private readonly down: { prefix: string; why: string }[] = [];
  private readonly described: McpServerDescription[] = [];

  private constructor(readonly limits: McpLimits) {}

  static async start(entries: readonly McpServerEntry[], opts: StartOptions): Promise<McpServers> {
    const limits = { ...DEFAULT_MCP_LIMITS, ...opts.limits };
    const servers = new McpServers(limits);
    const now = opts.now ?? (() => performance.now());
    const connect: ConnectOptions = {
      cwd: opts.cwd,
      env: opts.env,
      startupTimeoutMs: limits.startupTimeoutMs,
      maxMessageBytes: limits.maxMessageBytes,
      clientInfo: opts.clientInfo ?? { name: 'reloop', version: '0.1.0' },
    };
    type Started = { entry: McpServerEntry; transport: McpTransportKind } & (
      | { kind: 'skipped'; message: string }
      | { kind: 'failed'; message: string; durationMs: number }
      | { kind: 'connected'; conn: McpConnection; tools: McpToolInfo[]; durationMs: number }
    );
    const started = await Promise.all(
      entries.map(async (entry): Promise<Started> => {
        const transport = transportKind(entry.spec);
        if (entry.approved === false) {
          return { entry, transport, kind: 'skipped', message: entry.message ?? 'not approved' };
        }
        const t0 = now();
        try {
          const conn = await McpConnection.connect(entry.name, entry.spec, connect);
          try {
            const tools = await conn.listTools(limits.startupTimeoutMs);
            return { entry, transport, kind: 'connected', conn, tools, durationMs: now() - t0 };
          } catch (e) {
            await conn.close();
            throw e;
          }
        } catch (e) {
          const message =
            e instanceof McpStartError
              ? e.message
              : `MCP server ${JSON.stringify(entry.name)} failed to start: ${messageOf(e)}`;
          return { entry, transport, kind: 'failed', message, durationMs: now() - t0 };
        }
      }),
    );
    // Reported in the order given, whatever order they finished in: the log reads the same.
    const names = new Set<string>();
    for (const s of started) {
      const { entry, transport } = s;
      const base = { name: entry.name, transport, source: entry.source, serverInfo: null, tools: [] };
      if (s.kind === 'skipped') {
        opts.onEvent({ event: 'skipped', server: entry.name, source: entry.source, message: s.message });
        servers.down.push({ prefix: mcpServerPrefix(entry.name), why: s.message });
        servers.described.push({ ...base, status: 'skipped', message: s.message });
        continue;
      }
      if (s.kind === 'failed') {
        opts.onEvent({
          event: 'failed',
          server: entry.name,
          transport,
          source: entry.source,
          message: s.message,
          durationMs: round(s.durationMs),
        });
        servers.down.push({ prefix: mcpServerPrefix(entry.name), why: s.message });
        servers.described.push({ ...base, status: 'failed', message: s.message });
        continue;
      }
      const { conn, tools } = s;
      servers.connections.push(conn);
      opts.onEvent({
        event: 'connected',
        server: entry.name,
        transport,
        source: entry.source,
        serverInfo: conn.serverInfo,
        tools,
        durationMs: round(s.durationMs),
      });
      const description: McpServerDescription = {
        ...base,
        status: 'connected',
        serverInfo: conn.serverInfo,
        tools: [],
      };
      servers.described.push(description);
      for (const info of tools) {
        const name = mcpToolName(entry.name, info.name);
        if (names.has(name)) continue; // two names that normalise alike: the first stays
        names.add(name);
        const tool = mcpTool(conn, info, limits);
        servers.builtTools.push(tool);
        description.tools.push({
          name,
          description: tool.description,
          inputSchema: tool.jsonSchema ?? {},
          readOnly: tool.isReadOnly,
        });
      }
      conn.onClose((why) => {
        if (servers.closing) return;
        description.status = 'closed';
        description.message = why;
        opts.onEvent({
          event: 'closed',
          server: entry.name,
          message: `MCP server ${JSON.stringify(entry.name)} went away: ${why}`,
        });
      });
    }
    return servers;
  }

  private closing = false;

  /** The connected servers' tools, named `mcp__<server>__<tool>`. */
  tools(): AnyTool[] {
    return [...this.builtTools];
  }

  /** Tool-name prefixes of servers that are not there, and why (for unknown-tool results). */
  unavailable(): { prefix: string; why: string }[] {
    return [...this.down];
  }

  /** Every server and what became of it: the MCP part of a run's recorded setup. */
  describe(): McpServerDescription[] {
    return this.described.map((d) => ({ ...d, tools: [...d.tools] }));
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.connections.map((c) => c.close()));
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
