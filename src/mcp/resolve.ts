import { type ApprovalDecision, approveServers, type SettingsLayer } from './approval.ts';
import { expandServerConfig } from './config.ts';
import { loadMcpConfig } from './load.ts';
import type { McpServerEntry } from './servers.ts';

export interface ResolveMcpOptions {
  cwd: string;
  /** `--mcp-config` values (files or JSON). */
  flags?: readonly string[];
  strict?: boolean;
  /** The settings layers approvals are read from. */
  layers: readonly SettingsLayer[];
  /** What `${VAR}` expands from. */
  env: NodeJS.ProcessEnv;
}

export interface ResolvedMcp {
  /** Every configured server: approved ones to start, the others to report as skipped. */
  entries: McpServerEntry[];
  /** A project file that could not be used, a project server not approved: one line each. */
  warnings: string[];
  decisions: ApprovalDecision[];
}

/**
 * A run's MCP servers from its files and flags, as Claude Code resolves them: read, approved,
 * and (only those approved) their `${VAR}`s expanded. Throws McpConfigError for a bad
 * `--mcp-config` or an unset variable without a default in a server that is to start.
 */
export async function resolveMcpServers(opts: ResolveMcpOptions): Promise<ResolvedMcp> {
  const loaded = await loadMcpConfig({ cwd: opts.cwd, flags: opts.flags, strict: opts.strict });
  const decisions = approveServers(loaded.servers, opts.layers);
  const warnings = [...loaded.warnings];
  const entries: McpServerEntry[] = decisions.map((d) => {
    const { name, config, source, where } = d.server;
    if (!d.approved) {
      warnings.push(d.message ?? `MCP server ${JSON.stringify(name)} is not started`);
      return { name, spec: config, source, approved: false, message: d.message };
    }
    return { name, spec: expandServerConfig(config, opts.env, name, where), source };
  });
  return { entries, warnings, decisions };
}
