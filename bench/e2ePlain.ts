/**
 * The baseline of the end-to-end benchmark (bench/e2e.ts): a plain hand-written durable agent
 * loop on the same SDK as reloop, sending the same tools and system prompt, running the same
 * Read tool, and appending one JSON line + fdatasync per round. No statechart, no records, no
 * permissions: what a careful person would write by hand.
 *   node e2ePlain.js <log file> <cwd> <prompt>      (ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY set)
 */
import { open } from 'node:fs/promises';
import Anthropic from '@anthropic-ai/sdk';
import { DEFAULT_MODEL, DEFAULT_SYSTEM_PROMPT } from '../src/runtime/config.ts';
import { builtinTools } from '../src/tools/builtin/index.ts';
import { ToolRegistry } from '../src/tools/registry.ts';

const [file, cwd, prompt] = process.argv.slice(2) as [string, string, string];
const registry = new ToolRegistry(builtinTools());
const tools = registry.specs() as Anthropic.Tool[];
const client = new Anthropic({ maxRetries: 0 });
const log = await open(file, 'a');
const signal = new AbortController().signal;
const session = { sessionId: 'plain', fileRead: () => undefined };
const messages: Anthropic.MessageParam[] = [{ role: 'user', content: prompt }];
let rounds = 0;
try {
  while (true) {
    const stream = client.messages.stream({
      model: DEFAULT_MODEL,
      max_tokens: 8192,
      system: DEFAULT_SYSTEM_PROMPT,
      tools,
      messages,
    });
    const reply = await stream.finalMessage();
    messages.push({ role: 'assistant', content: reply.content });
    const uses = reply.content.filter((b) => b.type === 'tool_use');
    const results: Anthropic.ToolResultBlockParam[] = [];
    for (const use of uses) {
      const tool = registry.get(use.name);
      const input = tool?.inputSchema.safeParse(use.input);
      const out =
        tool && input?.success
          ? await tool.call(input.data, { signal, cwd, toolUseId: use.id, session })
          : { content: `bad call: ${use.name}`, isError: true };
      results.push({
        type: 'tool_result',
        tool_use_id: use.id,
        content: out.content as string,
        ...(out.isError ? { is_error: true } : {}),
      });
    }
    // One durable line per round: the answer and what the tools said.
    await log.write(`${JSON.stringify({ round: ++rounds, reply, results })}\n`);
    await log.datasync();
    if (uses.length === 0) break;
    messages.push({ role: 'user', content: results });
  }
} finally {
  await log.close();
}
process.stdout.write(`${JSON.stringify({ rounds })}\n`);
