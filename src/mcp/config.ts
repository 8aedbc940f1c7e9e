import { z } from 'zod';

/**
 * MCP server configuration as Claude Code reads it (`.mcp.json`, `--mcp-config`): stdio
 * (`command`, `args`, `env`; `type` omitted means stdio), streamable HTTP (`type: "http"`, or
 * its alias `"streamable-http"`; `url`, `headers`) and SSE (`type: "sse"`). Unknown keys are
 * ignored; `${VAR}` and `${VAR:-default}` are expanded in command, args, env, url and headers.
 */

const StringMap = z.record(z.string(), z.string());

export const StdioServerConfigSchema = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: StringMap.optional(),
});
export const HttpServerConfigSchema = z.object({
  type: z.enum(['http', 'streamable-http']),
  url: z.string().min(1),
  headers: StringMap.optional(),
});
export const SseServerConfigSchema = z.object({
  type: z.literal('sse'),
  url: z.string().min(1),
  headers: StringMap.optional(),
});

export type StdioServerConfig = z.infer<typeof StdioServerConfigSchema>;
export type HttpServerConfig = z.infer<typeof HttpServerConfigSchema>;
export type SseServerConfig = z.infer<typeof SseServerConfigSchema>;
/** A server a configuration file can name (an in-process server is given in code: McpServerSpec). */
export type McpServerConfig = StdioServerConfig | HttpServerConfig | SseServerConfig;

/** Where a server's configuration came from: it decides whether it needs approval. */
export type McpConfigSource = 'project' | 'flag' | 'library';

export class McpConfigError extends Error {
  readonly code = 'MCP_CONFIG_INVALID';
  constructor(
    /** The file (or `--mcp-config` value) the error is in. */
    readonly where: string,
    readonly detail: string,
    readonly server?: string,
  ) {
    super(`${where}: ${server !== undefined ? `MCP server ${JSON.stringify(server)}: ` : ''}${detail}`);
    this.name = 'McpConfigError';
  }
}

/** A server name as it appears in tool names (`mcp__<server>__<tool>`): Claude Code's alphabet. */
const SERVER_NAME = /^[A-Za-z0-9_-]+$/;

function issues(e: z.ZodError): string {
  return e.issues.map((i) => `${i.path.length ? i.path.join('.') : '(server)'}: ${i.message}`).join('; ');
}

/** One server's entry, checked by its `type`. */
export function parseServerConfig(raw: unknown, server: string, where: string): McpServerConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new McpConfigError(where, 'expected an object with "command" (stdio) or "type" and "url"', server);
  const type = (raw as { type?: unknown }).type;
  const schema =
    type === undefined || type === 'stdio'
      ? StdioServerConfigSchema
      : type === 'http' || type === 'streamable-http'
        ? HttpServerConfigSchema
        : type === 'sse'
          ? SseServerConfigSchema
          : undefined;
  if (!schema)
    throw new McpConfigError(where, `unknown type ${JSON.stringify(type)} (stdio, http or sse)`, server);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new McpConfigError(where, issues(parsed.error), server);
  return parsed.data;
}

/**
 * The servers of one configuration: `{ "mcpServers": { name: … } }`, or the unwrapped
 * `{ name: … }` that plugin files use. A bad entry fails the whole file, naming the server.
 */
export function parseMcpConfig(json: unknown, where: string): Record<string, McpServerConfig> {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new McpConfigError(where, 'expected a JSON object ({ "mcpServers": { … } })');
  const wrapped = (json as { mcpServers?: unknown }).mcpServers;
  const entries = wrapped !== undefined ? wrapped : json;
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries))
    throw new McpConfigError(where, '"mcpServers" must be an object of servers by name');
  const out: Record<string, McpServerConfig> = {};
  for (const [name, raw] of Object.entries(entries)) {
    if (!SERVER_NAME.test(name))
      throw new McpConfigError(where, 'a server name may hold only letters, digits, "_" and "-"', name);
    out[name] = parseServerConfig(raw, name, where);
  }
  return out;
}

/** Parses JSON text of a configuration file; a syntax error names the file and the position. */
export function parseMcpConfigText(text: string, where: string): Record<string, McpServerConfig> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new McpConfigError(where, `not valid JSON: ${(e as Error).message}`);
  }
  return parseMcpConfig(json, where);
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `${VAR}` / `${VAR:-default}` in one string; an unset variable without a default is an error. */
function expand(text: string, env: NodeJS.ProcessEnv, fail: (name: string) => never): string {
  return text.replace(VAR, (_, name: string, fallback: string | undefined) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    if (fallback !== undefined) return fallback;
    if (value !== undefined) return value;
    return fail(name);
  });
}

/** The configuration with its variables expanded (command, args, env, url, headers). */
export function expandServerConfig(
  config: McpServerConfig,
  env: NodeJS.ProcessEnv,
  server: string,
  where: string,
): McpServerConfig {
  const fail = (name: string): never => {
    throw new McpConfigError(
      where,
      `the environment variable ${name} is not set and \${${name}} has no default (write \${${name}:-default})`,
      server,
    );
  };
  const x = (s: string) => expand(s, env, fail);
  const map = (m: Record<string, string> | undefined) =>
    m === undefined ? undefined : Object.fromEntries(Object.entries(m).map(([k, v]) => [k, x(v)]));
  if ('command' in config) {
    return {
      ...config,
      command: x(config.command),
      ...(config.args ? { args: config.args.map(x) } : {}),
      ...(config.env ? { env: map(config.env) } : {}),
    };
  }
  return { ...config, url: x(config.url), ...(config.headers ? { headers: map(config.headers) } : {}) };
}

/** `stdio`, `http` or `sse`: what the log and the docs call the transport. */
export function transportOf(config: McpServerConfig): 'stdio' | 'http' | 'sse' {
  if ('command' in config) return 'stdio';
  return config.type === 'sse' ? 'sse' : 'http';
}
