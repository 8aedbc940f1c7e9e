import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { McpServerEntry } from '../mcp/servers.ts';
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
export async function mcpServersFor(opts: McpRunFlags, cwd: string): Promise<McpServerEntry[] | undefined> {
  const { resolveMcpServers, McpConfigError, mcpLimitsFromEnv, McpLimitError } = await import(
    '../mcp/index.ts'
  );
  try {
    mcpLimitsFromEnv(process.env);
    const resolved = await resolveMcpServers({
      cwd,
      flags: opts.mcpConfig ?? [],
      strict: opts.strictMcpConfig === true,
      layers: await settingsLayers(opts.settings, cwd),
      env: process.env,
    });
    for (const w of resolved.warnings) err(`warning: ${w}`);
    return resolved.entries.length > 0 ? resolved.entries : undefined;
  } catch (e) {
    if (e instanceof McpConfigError || e instanceof McpLimitError) throw new UsageError(e.message, e.code);
    throw e;
  }
}

/**
 * The settings layers approvals are read from. Until the settings loader (src/settings) is on
 * main, the `--settings` file alone, as `flagSettings`.
 */
async function settingsLayers(file: string | undefined, cwd: string) {
  if (!file) return [];
  const abs = path.resolve(file);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(abs, 'utf8'));
  } catch (e) {
    throw new UsageError(`--settings ${abs}: ${(e as Error).message}`, 'SETTINGS_INVALID');
  }
  return [{ source: 'flagSettings', file: abs, root: cwd, json }];
}
