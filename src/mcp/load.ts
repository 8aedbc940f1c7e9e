import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, messageOf } from '../lib/errors.ts';
import { McpConfigError, type McpConfigSource, type McpServerConfig, parseMcpConfigText } from './config.ts';

/** One configured server and where its configuration came from. */
export interface ConfiguredServer {
  name: string;
  config: McpServerConfig;
  source: McpConfigSource;
  /** The file or flag value it is in (for messages). */
  where: string;
}

export interface LoadMcpOptions {
  /** The project root: its `.mcp.json` is read. */
  cwd: string;
  /** `--mcp-config` values, each a file or a JSON object (repeatable). */
  flags?: readonly string[];
  /** `--strict-mcp-config`: only the flags' servers, the project's `.mcp.json` is not read. */
  strict?: boolean;
}

export interface LoadedMcpConfig {
  servers: ConfiguredServer[];
  /** A project file that could not be used: the run goes on without its servers. */
  warnings: string[];
}

/** The project's `.mcp.json` (absent: none). */
export const PROJECT_MCP_FILE = '.mcp.json';

/**
 * Reads every MCP configuration of a run, as Claude Code does: the project's `.mcp.json` (its
 * servers need approval: approval.ts) and each `--mcp-config` (approved by being given). A
 * `--mcp-config` that cannot be read or parsed is an error (McpConfigError); a malformed
 * `.mcp.json` is a warning, and the run goes on without the project's servers. A server named
 * in both is the flag's.
 */
export async function loadMcpConfig(opts: LoadMcpOptions): Promise<LoadedMcpConfig> {
  const byName = new Map<string, ConfiguredServer>();
  const warnings: string[] = [];
  if (!opts.strict) {
    const file = path.join(opts.cwd, PROJECT_MCP_FILE);
    let text: string | undefined;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      if (errnoCode(e) !== 'ENOENT')
        warnings.push(`${file}: cannot read: ${messageOf(e)}; its MCP servers are not started`);
    }
    if (text !== undefined) {
      try {
        for (const [name, config] of Object.entries(parseMcpConfigText(text, file)))
          byName.set(name, { name, config, source: 'project', where: file });
      } catch (e) {
        if (!(e instanceof McpConfigError)) throw e;
        warnings.push(`${e.message}; the project's MCP servers are not started`);
      }
    }
  }
  for (const value of opts.flags ?? []) {
    const { text, where } = await flagText(value, opts.cwd);
    for (const [name, config] of Object.entries(parseMcpConfigText(text, where)))
      byName.set(name, { name, config, source: 'flag', where });
  }
  return { servers: [...byName.values()], warnings };
}

async function flagText(value: string, cwd: string): Promise<{ text: string; where: string }> {
  if (value.trim().startsWith('{')) return { text: value, where: '--mcp-config <json>' };
  const file = path.resolve(cwd, value);
  try {
    return { text: await readFile(file, 'utf8'), where: `--mcp-config ${file}` };
  } catch (e) {
    throw new McpConfigError(`--mcp-config ${file}`, `cannot read: ${messageOf(e)}`);
  }
}
