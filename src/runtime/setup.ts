import { describeHooks, type HookDescription } from '../hooks/config.ts';
import type { HooksOption, StopHook } from '../hooks/types.ts';
import { sameJson } from '../lib/sameJson.ts';
import type { McpServerDescription } from '../mcp/servers.ts';
import type { ToolSpec } from '../model/types.ts';
import type { RecordData, SetupTool } from '../store/records.ts';
import type { RecordedSetup, SessionState } from '../store/sessionState.ts';
import type { ToolHooks } from '../tools/types.ts';

/** One permission rule in force, as the recorded setup keeps it. */
export interface PermissionRuleFact {
  /** `userSettings`, `projectSettings`, …, `cliArg`, `session`. */
  source: string;
  behavior: 'allow' | 'deny' | 'ask';
  /** The rule's text: `Bash(npm test:*)`, `Read(./secrets/**)`. */
  rule: string;
}

/**
 * SessionOptions.permissions: what the session's `canUseTool` enforces, for the recorded setup
 * (the CLI passes its mode and rules; a library caller with rules of its own may too).
 */
export interface PermissionSetup {
  mode?: string;
  rules?: readonly PermissionRuleFact[];
}

/** A memory file that went into the system prompt (SessionOptions.memoryFiles). */
export interface MemoryFileFact {
  path: string;
  sha256?: string;
  [key: string]: unknown;
}

/** What a session offers the model in one run besides its history: `run.setup` without the reference. */
export type CurrentSetup = Omit<RecordData<'run.setup'>, 'tools' | 'toolsFrom'> & { tools: SetupTool[] };

export interface SetupSources {
  specs: readonly ToolSpec[];
  hooks?: HooksOption;
  toolHooks?: ToolHooks;
  stopHooks?: readonly StopHook[];
  permissions?: PermissionSetup;
  /** A `canUseTool` was given (its code decides; its decisions are logged). */
  callback: boolean;
  mcpServers: readonly McpServerDescription[];
  memory?: readonly MemoryFileFact[];
}

export function setupTools(specs: readonly ToolSpec[]): SetupTool[] {
  return specs.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema }));
}

/** The setup as this process offers it now. */
export function currentSetup(s: SetupSources): CurrentSetup {
  return {
    tools: setupTools(s.specs),
    hooks: hookFacts(s),
    permissions: {
      mode: s.permissions?.mode ?? null,
      rules: (s.permissions?.rules ?? []).map((r) => ({
        source: r.source,
        behavior: r.behavior,
        rule: r.rule,
      })),
      callback: s.callback && s.permissions === undefined,
    },
    mcpServers: s.mcpServers.map((m) => ({
      name: m.name,
      transport: m.transport,
      source: m.source,
      status: m.status,
    })),
    ...(s.memory ? { memory: s.memory.map((m) => ({ ...m })) } : {}),
  };
}

/** Every hook of the session, the first hook API's included (as callbacks). */
function hookFacts(s: SetupSources): HookDescription[] {
  const out = s.hooks ? describeHooks(s.hooks) : [];
  const legacy = (event: string, command: string): HookDescription => ({
    source: 'session',
    event: event as HookDescription['event'],
    matcher: null,
    command,
    timeout: null,
  });
  const events = {
    preToolUse: 'PreToolUse',
    permissionRequest: 'PermissionRequest',
    notify: 'Notification',
    postToolUse: 'PostToolUse',
    postToolUseFailure: 'PostToolUseFailure',
  } as const;
  for (const [key, event] of Object.entries(events))
    if (s.toolHooks?.[key as keyof ToolHooks]) out.push(legacy(event, `callback toolHooks.${key}`));
  for (const h of s.stopHooks ?? []) out.push(legacy('Stop', `callback ${h.name}`));
  return out;
}

/** The record of a setup: its tool list referred to when the session's last setup has the same one. */
export function setupData(state: SessionState, setup: CurrentSetup): RecordData<'run.setup'> {
  const { tools, ...rest } = setup;
  const known = state.setup;
  return known && sameJson(known.tools, tools) ? { ...rest, toolsFrom: known.toolsSeq } : { ...rest, tools };
}

/** What a resume compares: known before the run starts (MCP tools are not: servers start in the run). */
export interface ComparableSetup {
  /** The tools offered, MCP servers' tools left out. */
  tools: readonly SetupTool[];
  system: string | undefined;
  hooks: CurrentSetup['hooks'];
  permissions: CurrentSetup['permissions'];
  /** Names of the MCP servers configured. */
  mcpServers: readonly string[];
}

const isMcpTool = (name: string) => name.startsWith('mcp__');

/**
 * How the setup a session recorded differs from what this process offers, one phrase per
 * difference (`tools: lookupTicket missing`, `system prompt differs`); empty when it is the same.
 */
export function setupDifferences(
  recorded: RecordedSetup,
  recordedSystem: string | undefined,
  now: ComparableSetup,
): string[] {
  const out: string[] = [];
  const before = new Map(recorded.tools.filter((t) => !isMcpTool(t.name)).map((t) => [t.name, t]));
  const after = new Map(now.tools.filter((t) => !isMcpTool(t.name)).map((t) => [t.name, t]));
  const tools: string[] = [];
  for (const [name, t] of before) {
    const n = after.get(name);
    if (!n) tools.push(`${name} missing`);
    else if (n.description !== t.description) tools.push(`${name} description differs`);
    else if (!sameJson(n.inputSchema, t.inputSchema)) tools.push(`${name} input schema differs`);
  }
  for (const name of after.keys()) if (!before.has(name)) tools.push(`${name} added`);
  if (tools.length > 0) out.push(`tools: ${tools.join(', ')}`);
  if ((recordedSystem ?? null) !== (now.system ?? null)) out.push('system prompt differs');
  if (!sameJson(recorded.hooks, now.hooks)) out.push('hooks differ');
  const rp = recorded.permissions;
  const np = now.permissions;
  if (rp.mode !== np.mode) out.push(`permission mode: ${rp.mode ?? 'none'} → ${np.mode ?? 'none'}`);
  // A callback's code cannot be compared, nor its presence be told from a test's default policy: rules can.
  if (!sameJson(rp.rules, np.rules)) out.push('permission rules differ');
  const servers = recorded.mcpServers.map((m) => m.name);
  const missing = servers.filter((s) => !now.mcpServers.includes(s));
  const added = now.mcpServers.filter((s) => !servers.includes(s));
  if (missing.length + added.length > 0)
    out.push(
      `mcp servers: ${[...missing.map((s) => `${s} missing`), ...added.map((s) => `${s} added`)].join(', ')}`,
    );
  return out;
}

/** A resume refused: the session's recorded setup is not what this process offers. */
export class SetupChangedError extends Error {
  readonly code = 'SETUP_CHANGED';
  constructor(
    readonly sessionId: string,
    readonly differences: readonly string[],
  ) {
    super(
      `session ${sessionId} was recorded with another setup: ${differences.join('; ')} (accept it with --accept-setup-change)`,
    );
    this.name = 'SetupChangedError';
  }
}
