import { mkdtemp, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AnyTool, FileReadFact, ToolContext, ToolOutput } from '../../src/tools/types.ts';

/** A temp dir (real path, so macOS /var → /private/var does not confuse comparisons). */
export async function tempDir(prefix = 'reloop-tools-'): Promise<string> {
  return realpath(await mkdtemp(path.join(os.tmpdir(), prefix)));
}

export async function removeDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** Stands in for the session: remembers the files-read facts tools return, as the runtime does. */
export class FakeSession {
  readonly sessionId = 'test-session';
  readonly facts = new Map<string, FileReadFact>();
  fileRead(p: string): FileReadFact | undefined {
    return this.facts.get(p);
  }
  remember(out: ToolOutput): void {
    for (const f of out.filesRead ?? []) this.facts.set(f.path, f);
  }
}

export function contextFor(cwd: string, session = new FakeSession(), signal = new AbortController().signal) {
  const ctx: ToolContext = { cwd, signal, toolUseId: 'toolu_test', session };
  return { ctx, session };
}

/** Validates the input with the tool's schema (as the registry would), calls it, records facts. */
export async function callTool(tool: AnyTool, input: unknown, ctx: ToolContext): Promise<ToolOutput> {
  const parsed = tool.inputSchema.parse(input);
  const out = await tool.call(parsed, ctx);
  if (ctx.session instanceof FakeSession) ctx.session.remember(out);
  return out;
}

export function textOf(out: ToolOutput): string {
  return typeof out.content === 'string' ? out.content : JSON.stringify(out.content);
}
