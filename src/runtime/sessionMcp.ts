import { sameJson } from '../lib/sameJson.ts';
import { childEnv } from '../lib/secrets.ts';
import type { InProcessServer, McpServerSpec } from '../mcp/connection.ts';
import {
  type McpLimits,
  type McpServerDescription,
  type McpServerEntry,
  type McpServerEvent,
  McpServers,
  mcpLimitsFromEnv,
} from '../mcp/servers.ts';
import type { RecordData } from '../store/records.ts';
import type { SessionState } from '../store/sessionState.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { AnyTool } from '../tools/types.ts';

/** SessionOptions.mcpServers: servers by name (a configuration or an in-process server), or entries. */
export type McpServersOption =
  | Readonly<Record<string, McpServerSpec | InProcessServer>>
  | readonly McpServerEntry[];

interface SessionMcpDeps {
  option: McpServersOption | undefined;
  limits: Partial<McpLimits> | undefined;
  /** Tools that stand for the servers' (a rerun's, answered from the log): no server is started. */
  fromLog?: readonly AnyTool[];
  cwd: string;
  /** Where the servers' tools go: the session's registry, and the one sub-agents choose from. */
  registries: readonly ToolRegistry[];
  state: () => SessionState;
  rec: (run: string | null, data: RecordData<'mcp.server'>) => void;
}

/**
 * A session's MCP servers: started once, inside the first run (their records are that run's),
 * before anything may call them, and kept until the session is closed. A server that fails is
 * a record and a tool that answers why, never a failed run.
 */
export class SessionMcp {
  private servers: McpServers | null = null;

  constructor(private readonly d: SessionMcpDeps) {}

  private registeredFromLog = false;

  async start(runId: string): Promise<void> {
    if (this.d.fromLog) {
      if (this.registeredFromLog) return;
      this.registeredFromLog = true;
      for (const registry of this.d.registries) for (const t of this.d.fromLog) registry.register(t);
      return;
    }
    if (this.servers || !this.d.option) return;
    const entries = mcpEntries(this.d.option);
    if (entries.length === 0) return;
    this.servers = await McpServers.start(entries, {
      cwd: this.d.cwd,
      // A stdio server gets the runtime's environment without its secrets, plus its own `env`.
      env: childEnv(),
      limits: this.d.limits ?? mcpLimitsFromEnv(process.env),
      onEvent: (e) => this.record(e, runId),
    });
    for (const registry of this.d.registries) {
      for (const t of this.servers.tools()) registry.register(t);
      for (const u of this.servers.unavailable()) registry.markUnavailable(u.prefix, u.why);
    }
  }

  describe(): McpServerDescription[] {
    return this.servers?.describe() ?? [];
  }

  /** The servers configured, by name (known before they start: what a resume compares). */
  configuredNames(): string[] {
    return this.d.option ? mcpEntries(this.d.option).map((e) => e.name) : [];
  }

  async close(): Promise<void> {
    const servers = this.servers;
    this.servers = null;
    await servers?.close();
  }

  /** One server event as a record; a tool list the log already holds for the server is referred to. */
  private record(e: McpServerEvent, startRun: string): void {
    // A server that dies later is logged in the run going on then, or between runs.
    const run = e.event === 'closed' ? (this.d.state().currentRun?.id ?? null) : startRun;
    if (e.event !== 'connected') {
      this.d.rec(run, e);
      return;
    }
    const known = this.d.state().mcpServers.get(e.server);
    const { tools, ...rest } = e;
    const from = known?.toolsSeq;
    this.d.rec(
      run,
      from != null && sameJson(known?.tools, tools) ? { ...rest, toolsFrom: from } : { ...rest, tools },
    );
  }
}

/** The option as entries: configurations and in-process servers given in code, or entries as given. */
function mcpEntries(option: McpServersOption): McpServerEntry[] {
  if (Array.isArray(option)) return [...(option as readonly McpServerEntry[])];
  return Object.entries(option as Record<string, McpServerSpec | InProcessServer>).map(([name, v]) => {
    const spec: McpServerSpec = isInProcess(v) ? { type: 'sdk', instance: v } : v;
    return { name, spec, source: 'type' in spec && spec.type === 'sdk' ? 'sdk' : 'library' };
  });
}

function isInProcess(v: unknown): v is InProcessServer {
  return typeof (v as { connect?: unknown }).connect === 'function';
}
