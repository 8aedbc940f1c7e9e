import path from 'node:path';
import { z } from 'zod';
import { loadAgents } from '../agents/index.ts';
import { runHooksFromLayers } from '../hooks/settings.ts';
import { resolveMcpServers } from '../mcp/resolve.ts';
import { AnthropicModelClient } from '../model/anthropic.ts';
import { costOf } from '../model/pricing.ts';
import { parseScript } from '../model/script.ts';
import { ScriptedModelClient } from '../model/scripted.ts';
import type { RunSettings } from '../runtime/config.ts';
import { offeredTools, permissionSetup, runSettingsLayers } from '../runtime/permissionSetup.ts';
import type { SessionOptions } from '../runtime/session.ts';
import { FILE_SOURCES, userClaudeDir } from '../settings/index.ts';
import type { EventStore } from '../store/types.ts';
import { builtinTools } from '../tools/builtin/index.ts';
import { PermissionModeSchema } from '../tools/permissions/index.ts';

/**
 * What a queued run is run with: the `reloop run` flags of the submitter, resolved (absolute
 * paths, the script's content rather than its file, so a worker on another machine can run it).
 * Stored with the job (jsonb) and validated again by the worker.
 */
export const RunSpecSchema = z.strictObject({
  model: z.string().optional(),
  script: z.strictObject({ file: z.string(), content: z.unknown() }).optional(),
  cwd: z.string(),
  maxTurns: z.number().int().positive().optional(),
  /** Attempts per model request (`--max-attempts`). */
  maxAttempts: z.number().int().positive().optional(),
  maxBudgetUsd: z.number().positive().optional(),
  fallbackModel: z.string().optional(),
  /** `--permission-mode`; absent: the settings' `defaultMode`, else default. */
  permissionMode: PermissionModeSchema.optional(),
  allow: z.array(z.string()),
  deny: z.array(z.string()),
  stopHook: z.array(z.string()),
  settings: z.string().optional(),
  /** `--setting-sources` (read on the worker, from its home and the cwd); absent: none, as older specs. */
  settingSources: z.array(z.enum(FILE_SOURCES)).optional(),
  /** `--add-dir`, absolute. */
  addDir: z.array(z.string()).optional(),
  /** `--tools`: which built-in tools exist (absent: all). */
  tools: z.string().optional(),
  /** Secret variables Bash and hooks may see (on the worker: its own environment's values). */
  passEnv: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).default([]),
  /** What an `ask` becomes (nobody is attached to a worker): park for an approval, or deny. */
  onAsk: z.enum(['park', 'deny']).default('park'),
  /** More sub-agent definitions for `Task` (absolute `--agents-dir`s; the cwd's .claude/agents always count). */
  agentsDir: z.array(z.string()).default([]),
  subagentMaxTurns: z.number().int().positive().optional(),
  /** `--mcp-config` values as JSON text (read by the submitter), and `--strict-mcp-config`. */
  mcpConfig: z.array(z.string()).optional(),
  strictMcpConfig: z.boolean().optional(),
  /** The system prompt the flags made (`--system-prompt[-file]`, `--append-system-prompt[-file]`), as text. */
  systemPrompt: z.string().optional(),
  /** `submit --resume --accept-setup-change`: run even though the session recorded another setup. */
  acceptSetupChange: z.boolean().optional(),
});
export type RunSpec = z.infer<typeof RunSpecSchema>;

export class RunSpecError extends Error {
  readonly code = 'RUN_SPEC';
  constructor(
    readonly session: string,
    detail: string,
  ) {
    super(`the queued run of ${session} cannot be run: ${detail}`);
    this.name = 'RunSpecError';
  }
}

export function parseRunSpec(session: string, raw: unknown): RunSpec {
  const parsed = RunSpecSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new RunSpecError(session, `${issue?.path.join('.') || '(spec)'}: ${issue?.message ?? 'invalid'}`);
}

/**
 * The session options a spec stands for, as `reloop run` builds them from its flags: the model
 * (a script, resumed at `scriptStartAt`, or Anthropic), the built-in tools, the permission
 * policy, stop hooks and settings hooks. Nobody is attached: an `ask` parks the run.
 */
export async function sessionOptionsFor(
  spec: RunSpec,
  deps: { store: EventStore; scriptStartAt?: number; warn?: (line: string) => void },
): Promise<SessionOptions> {
  const cwd = path.resolve(spec.cwd);
  const settings: RunSettings = {};
  if (spec.maxTurns !== undefined) settings.maxTurns = spec.maxTurns;
  if (spec.maxAttempts !== undefined) settings.maxTransportAttempts = spec.maxAttempts;
  if (spec.maxBudgetUsd !== undefined) settings.maxBudgetUsd = spec.maxBudgetUsd;
  if (spec.fallbackModel) settings.fallbackModel = spec.fallbackModel;
  if (spec.model) settings.model = spec.model;
  if (spec.systemPrompt !== undefined) settings.system = spec.systemPrompt;
  const model = spec.script
    ? new ScriptedModelClient(parseScript(spec.script.content, spec.script.file), {
        file: spec.script.file,
        costOf,
        startAt: deps.scriptStartAt ?? 0,
      })
    : new AnthropicModelClient();
  const passEnv = spec.passEnv;
  // The settings layers as `reloop run` reads them (src/runtime/permissionSetup.ts): the same
  // layers go to the permission policy, the hooks and the MCP approvals.
  const { layers, warnings } = await runSettingsLayers({
    cwd,
    sources: spec.settingSources ?? [],
    ...(spec.settings ? { flagSettings: spec.settings } : {}),
  });
  for (const w of warnings) deps.warn?.(w);
  const perms = permissionSetup({
    cwd,
    layers,
    ...(spec.permissionMode ? { mode: spec.permissionMode } : {}),
    allow: spec.allow,
    deny: spec.deny,
    addDirs: spec.addDir ?? [],
  });
  for (const w of perms.warnings) deps.warn?.(w);
  const hooks = runHooksFromLayers(layers, spec.stopHook);
  for (const w of hooks.warnings) deps.warn?.(w);
  const tools = offeredTools(
    builtinTools({
      allowOutsideCwd: perms.toolReach,
      // Grep and Glob over a tree skip what a Read deny or ask rule covers.
      ...(perms.readDenied ? { readDenied: perms.readDenied } : {}),
      bash: { passEnv },
      webFetch: { redirectAllowed: perms.redirectAllowed },
    }),
    spec.tools,
    perms.rules.deny,
    [...builtinTools().map((t) => t.name), 'Task'],
  );
  // `Task` is a built-in for `--tools` and a whole-tool deny, as `reloop run` has it.
  const task = offeredTools([{ name: 'Task' }], spec.tools, perms.rules.deny, [
    'Task',
    ...tools.map((t) => t.name),
  ]);
  // MCP servers as `reloop run` resolves them: the project's (approved in the settings) and the flags'.
  const mcp = await resolveMcpServers({
    cwd,
    flags: spec.mcpConfig,
    strict: spec.strictMcpConfig,
    layers,
    env: process.env,
  });
  for (const w of mcp.warnings) deps.warn?.(w);
  // `Task`, as `reloop run` offers it: a sub-agent runs in the worker that runs its parent.
  // The cwd's .claude/agents always count (as in older specs); the user's with `user` only.
  const userAgents = spec.settingSources?.includes('user') ? { userDir: userClaudeDir() } : {};
  const agents = await loadAgents({ cwd, dirs: spec.agentsDir, ...userAgents });
  agents.checkTools(tools.map((t) => t.name));
  for (const w of agents.warnings) deps.warn?.(w);
  return {
    store: deps.store,
    model,
    cwd,
    // CLAUDE.md memory as `reloop run` reads it: the sources `--setting-sources` named.
    memory: { sources: spec.settingSources ?? [] },
    ...(task.length > 0
      ? {
          subAgents: {
            agents,
            ...(spec.subagentMaxTurns !== undefined ? { maxTurns: spec.subagentMaxTurns } : {}),
          },
        }
      : {}),
    tools,
    canUseTool: perms.canUseTool,
    permissions: { mode: perms.mode, rules: perms.facts },
    unattendedAsk: spec.onAsk,
    ...(mcp.entries.length > 0 ? { mcpServers: mcp.entries } : {}),
    hooks: hooks.hooks,
    hookOptions: { permissionMode: perms.mode, passEnv },
    settings,
    ...(spec.acceptSetupChange ? { acceptSetupChange: true } : {}),
  };
}
