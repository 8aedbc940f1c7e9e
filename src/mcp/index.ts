export { type ApprovalDecision, approveServers, type SettingsLayer } from './approval.ts';
export {
  expandServerConfig,
  type HttpServerConfig,
  McpConfigError,
  type McpConfigSource,
  type McpServerConfig,
  parseMcpConfig,
  parseMcpConfigText,
  type SseServerConfig,
  type StdioServerConfig,
  transportOf,
} from './config.ts';
export {
  type InProcessServer,
  McpConnection,
  type McpServerSpec,
  McpStartError,
  type McpToolInfo,
  type McpTransportKind,
} from './connection.ts';
export { type ConfiguredServer, type LoadedMcpConfig, loadMcpConfig, PROJECT_MCP_FILE } from './load.ts';
export { type ResolvedMcp, type ResolveMcpOptions, resolveMcpServers } from './resolve.ts';
export { capBlocks, contentBlocks, DEFAULT_MAX_MCP_OUTPUT_TOKENS } from './results.ts';
export {
  DEFAULT_MCP_LIMITS,
  McpLimitError,
  type McpLimits,
  type McpServerDescription,
  type McpServerEntry,
  type McpServerEvent,
  type McpServerSource,
  McpServers,
  mcpLimitsFromEnv,
} from './servers.ts';
export { mcpServerPrefix, mcpTool, mcpToolName, normalizeName } from './tools.ts';
