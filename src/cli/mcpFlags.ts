import type { McpServerEntry } from '../mcp/servers.ts';
import type { SettingsLayer } from '../settings/index.ts';
import { err, UsageError } from './io.ts';

export interface McpRunFlags {
  mcpConfig?: string[];
  strictMcpConfig?: boolean;
  settings?: string;
}

/**
 * The MCP servers of a `reloop run`: the project's `.mcp.json` (started when approved in the
 * settings) and each `--mcp-config`. A bad `--mcp-config`, a bad MCP_* limit or an unset
 * variable is bad usage (exit 2) before anything is written; a project file that cannot be used
 * and a server nobody approved are warnings, and the run goes on without them.
 */
export async function mcpServersFor(
  opts: McpRunFlags,
  cwd: string,
  layers: readonly SettingsLayer[],
): Promise<McpServerEntry[] | undefined> {
  const { resolveMcpServers, McpConfigError, mcpLimitsFromEnv, McpLimitError } = await import(
    '../mcp/index.ts'
  );
  try {
    mcpLimitsFromEnv(process.env);
    const resolved = await resolveMcpServers({
      cwd,
      flags: opts.mcpConfig ?? [],
      strict: opts.strictMcpConfig === true,
      // Every settings layer of the run (src/cli/permissionFlags.ts): approvals and refusals.
      layers,
      env: process.env,
    });
    for (const w of resolved.warnings) err(`warning: ${w}`);
    return resolved.entries.length > 0 ? resolved.entries : undefined;
  } catch (e) {
    if (e instanceof McpConfigError || e instanceof McpLimitError) throw new UsageError(e.message, e.code);
    throw e;
  }
}
