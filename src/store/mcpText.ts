import type { RecordOf } from './records.ts';

/** One line about an `mcp.server` record, for `reloop log` and the viewer's notes. */
export function mcpServerText(r: RecordOf<'mcp.server'>): string {
  const d = r.data;
  switch (d.event) {
    case 'connected': {
      const version = d.serverInfo ? ` (${d.serverInfo.name} ${d.serverInfo.version})` : '';
      const tools = d.tools ? `${d.tools.length} tools` : `tools as at seq ${d.toolsFrom}`;
      return `MCP server ${d.server} connected over ${d.transport}${version}: ${tools}, in ${Math.round(d.durationMs)} ms`;
    }
    case 'failed':
      return `MCP server ${d.server} (${d.transport}) failed: ${d.message}`;
    case 'skipped':
      return `MCP server ${d.server} skipped: ${d.message}`;
    case 'closed':
      return `MCP server ${d.server} closed: ${d.message}`;
  }
}

/** One line about a `run.setup` record, for `reloop log` and the viewer's notes. */
export function setupText(r: RecordOf<'run.setup'>): string {
  const d = r.data;
  const tools = d.tools ? `${d.tools.length} tools` : `tools as at seq ${d.toolsFrom}`;
  const rules = d.permissions.rules.length;
  const mode = d.permissions.mode ? `mode ${d.permissions.mode}, ` : '';
  const mcp = d.mcpServers.length > 0 ? `, ${d.mcpServers.length} MCP servers` : '';
  return `setup: ${tools}, ${d.hooks.length} hooks, ${mode}${rules} permission rules${mcp}`;
}
