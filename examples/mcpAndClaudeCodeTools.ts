/**
 * An MCP server handed over in-process, and the tools Claude Code's models expect: the model
 * (scripted here) plans with TodoWrite, starts a background shell, reads its output, and calls
 * the server's tool. Then the session is closed (the server with it) and verified from its log
 * alone. Type-checked with the project; run it with
 *   node --import tsx examples/mcpAndClaudeCodeTools.ts
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import {
  builtinTools,
  loadRecords,
  openFileStore,
  ScriptedModelClient,
  Session,
  verifyReplay,
} from '../src/index.ts';

const weather = new McpServer({ name: 'weather', version: '1.0.0' });
weather.registerTool(
  'forecast',
  {
    description: 'The forecast for a city.',
    inputSchema: { city: z.string() },
    annotations: { readOnlyHint: true },
  },
  async ({ city }) => ({ content: [{ type: 'text', text: `${city}: sunny, 21 °C` }] }),
);

const usage = {
  input_tokens: 100,
  output_tokens: 20,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
};
const call = (id: string, name: string, input: unknown) => ({
  content: [{ type: 'tool_use' as const, id, name, input }],
  stop_reason: 'tool_use' as const,
  usage,
});
const todos = (status: string) => [
  { content: 'Check the forecast', status, activeForm: 'Checking the forecast' },
];
const model = new ScriptedModelClient({
  turns: [
    call('toolu_plan', 'TodoWrite', { todos: todos('in_progress') }),
    call('toolu_bg', 'Bash', { command: 'echo warming up; sleep 30', run_in_background: true }),
    call('toolu_forecast', 'mcp__weather__forecast', { city: 'Lisbon' }),
    call('toolu_done', 'TodoWrite', { todos: todos('completed') }),
    { text: 'Lisbon will be sunny.', stop_reason: 'end_turn' as const, usage },
  ],
});

const dir = await mkdtemp(path.join(tmpdir(), 'reloop-mcp-example-'));
const store = await openFileStore(path.join(dir, '.reloop'));
const session = await Session.create({
  store,
  model,
  tools: builtinTools(),
  cwd: dir,
  mcpServers: { weather },
});
const result = await session.submit('What is the weather in Lisbon?');
console.log(result.status, result.reason, `${result.turns} turns`);
console.log(
  'todos:',
  session.state.todos?.items.map((t) => `${t.status} ${t.content}`),
);
console.log(
  'MCP servers:',
  session.describeMcpServers().map((s) => `${s.name} ${s.status} (${s.tools.length} tools)`),
);
await session.close(); // the server's connection ends; the run's end already killed the background shell

const records = await loadRecords(store, session.id);
const report = await verifyReplay(records);
console.log(
  report.ok ? 'replays identically, no server needed' : `diverges at seq ${report.divergence?.seq}`,
);
await store.close();
