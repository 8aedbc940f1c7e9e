import type { ConfiguredServer } from './load.ts';

/** A settings layer as the settings loader hands them out (src/settings, the config helper's). */
export interface SettingsLayer {
  source: string;
  file: string | null;
  root: string;
  json: unknown;
}

export interface ApprovalDecision {
  server: ConfiguredServer;
  approved: boolean;
  /** Who decided: `--mcp-config`, `<source> enabledMcpjsonServers`, `… disabledMcpjsonServers`, … */
  by: string;
  /** Why a project server is not started, with how to approve it. */
  message?: string;
}

/**
 * Which servers may start. A `--mcp-config` or library server is approved by being given; a
 * project `.mcp.json` server only when a settings file the repository does not control approves
 * it (`enableAllProjectMcpServers: true`, or its name in `enabledMcpjsonServers`) — as in Claude
 * Code, the project's own `.claude/settings.json` cannot approve its servers. A name in
 * `disabledMcpjsonServers` of any layer (the project's too) refuses it, whatever approves it.
 */
export function approveServers(
  servers: readonly ConfiguredServer[],
  layers: readonly SettingsLayer[],
): ApprovalDecision[] {
  const disabledBy = new Map<string, string>();
  const enabledBy = new Map<string, string>();
  let allBy: string | undefined;
  for (const layer of layers) {
    const json = (layer.json ?? {}) as Record<string, unknown>;
    for (const name of names(json.disabledMcpjsonServers))
      disabledBy.set(name, `${layer.source} disabledMcpjsonServers`);
    if (layer.source === 'projectSettings') continue;
    for (const name of names(json.enabledMcpjsonServers))
      enabledBy.set(name, `${layer.source} enabledMcpjsonServers`);
    if (json.enableAllProjectMcpServers === true) allBy = `${layer.source} enableAllProjectMcpServers`;
  }
  return servers.map((server): ApprovalDecision => {
    if (server.source !== 'project') {
      return { server, approved: true, by: server.source === 'flag' ? '--mcp-config' : 'library' };
    }
    const disabled = disabledBy.get(server.name);
    if (disabled) {
      return {
        server,
        approved: false,
        by: disabled,
        message: `MCP server ${JSON.stringify(server.name)} of ${server.where} is disabled (${disabled})`,
      };
    }
    const by = enabledBy.get(server.name) ?? allBy;
    if (by) return { server, approved: true, by };
    return {
      server,
      approved: false,
      by: 'not approved',
      message:
        `MCP server ${JSON.stringify(server.name)} of ${server.where} is not started: a project's servers need ` +
        `approval. Add "enabledMcpjsonServers": [${JSON.stringify(server.name)}] (or "enableAllProjectMcpServers": true) ` +
        'to .claude/settings.local.json or ~/.claude/settings.json, or pass the file with --mcp-config',
    };
  });
}

function names(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}
