import { z } from 'zod';
import { messageOf } from '../lib/errors.ts';
import type { AnyTool, ToolOutput } from '../tools/types.ts';
import type { McpConnection, McpToolInfo } from './connection.ts';
import { capBlocks, compactContent, contentBlocks } from './results.ts';

export interface McpToolLimits {
  /** One tools/call (MCP_TOOL_TIMEOUT). */
  toolTimeoutMs: number;
  /** Cap on one result (MAX_MCP_OUTPUT_TOKENS). */
  maxOutputTokens: number;
}

/** Names as the API takes them: letters, digits, `_` and `-` (Claude Code's rule for MCP names). */
export function normalizeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** `mcp__<server>__<tool>`, as Claude Code names an MCP server's tools. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${normalizeName(server)}__${normalizeName(tool)}`;
}

/** The prefix every tool of a server has: rules and unknown-tool messages match on it. */
export function mcpServerPrefix(server: string): string {
  return `mcp__${normalizeName(server)}__`;
}

// The server checks its own arguments against its schema; reloop only insists on an object.
const ArgumentsSchema = z.record(z.string(), z.unknown());

function objectSchema(schema: Record<string, unknown>): Record<string, unknown> {
  return schema.type === 'object' ? schema : { ...schema, type: 'object' };
}

/**
 * One MCP tool as a reloop tool. It carries the server's description and JSON schema to the
 * model, goes through the same admission (rules, hooks, approvals) as any tool, and answers
 * with the server's result mapped to content blocks; `isError` becomes is_error. A server's
 * `readOnlyHint` makes the tool read-only (asked less, run in parallel, re-run on resume).
 */
export function mcpTool(conn: McpConnection, info: McpToolInfo, limits: McpToolLimits): AnyTool {
  const name = mcpToolName(conn.name, info.name);
  const readOnly = info.annotations?.readOnlyHint === true;
  const description =
    info.description && info.description.trim() !== ''
      ? info.description
      : `${info.annotations?.title ?? info.name} (a tool of the MCP server ${conn.name})`;
  return {
    name,
    description,
    inputSchema: ArgumentsSchema,
    jsonSchema: objectSchema(info.inputSchema),
    isReadOnly: readOnly,
    isConcurrencySafe: () => readOnly,
    // The call's own timeout is the SDK's (it cancels the request); this is the backstop.
    timeoutMs: limits.toolTimeoutMs + 5_000,
    async call(input: Record<string, unknown>, ctx): Promise<ToolOutput> {
      const gone = conn.closed;
      if (gone)
        return {
          content: `MCP server ${JSON.stringify(conn.name)} is not connected: ${gone}.`,
          isError: true,
        };
      let result: Awaited<ReturnType<McpConnection['call']>>;
      try {
        result = await conn.call(info.name, input, { signal: ctx.signal, timeoutMs: limits.toolTimeoutMs });
      } catch (e) {
        return { content: callFailure(conn, e, limits.toolTimeoutMs, ctx.signal), isError: true };
      }
      const { blocks } = capBlocks(contentBlocks(result), limits.maxOutputTokens, name);
      return { content: compactContent(blocks), isError: result.isError === true };
    },
  };
}

function callFailure(conn: McpConnection, e: unknown, timeoutMs: number, signal: AbortSignal): string {
  const server = `MCP server ${JSON.stringify(conn.name)}`;
  if (signal.aborted) return `${server}: the call was cancelled.`;
  const code = (e as { code?: unknown })?.code;
  if (code === -32001)
    return `${server} did not answer within ${timeoutMs} ms (MCP_TOOL_TIMEOUT); the call was cancelled.`;
  if (conn.closed) return `${server} went away during the call: ${conn.closed}.`;
  if (code === -32000) return `${server} closed the connection during the call.`;
  return `${server} failed the call: ${messageOf(e)}`;
}
