import { z } from 'zod';

/**
 * The keys of a Claude Code settings file that reloop reads, with the types Claude Code gives
 * them. Everything else is accepted as is (`$schema`, `statusLine`, `enabledPlugins`, …): the
 * objects are loose, so a project's file with keys this version does not know still loads.
 * A known key with the wrong type is an error naming the file and the field: a file whose
 * permissions cannot be read is refused whole, never skipped (skipping it would drop its deny
 * rules without a word).
 */

/** Claude Code's permission modes (`dontAsk`: deny whatever no rule allows). */
export const PERMISSION_MODES = ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'dontAsk'] as const;

const RuleList = z.array(z.string());

export const PermissionsSettingsSchema = z.looseObject({
  allow: RuleList.optional(),
  ask: RuleList.optional(),
  deny: RuleList.optional(),
  defaultMode: z.enum(PERMISSION_MODES).optional(),
  additionalDirectories: z.array(z.string()).optional(),
  disableBypassPermissionsMode: z.literal('disable').optional(),
});

export const SettingsFileSchema = z.looseObject({
  permissions: PermissionsSettingsSchema.optional(),
  model: z.string().trim().min(1).optional(),
  // Read by the MCP client (src/mcp): which of the project's `.mcp.json` servers are approved.
  enableAllProjectMcpServers: z.boolean().optional(),
  enabledMcpjsonServers: z.array(z.string()).optional(),
  disabledMcpjsonServers: z.array(z.string()).optional(),
  // `hooks` is validated by the hooks layer (src/hooks), which knows every event's shape.
  hooks: z.record(z.string(), z.unknown()).optional(),
});
export type SettingsFile = z.infer<typeof SettingsFileSchema>;

/**
 * Keys that change what Claude Code does and that reloop does not do: each found is one warning
 * (the rest of the file still applies). Keys that only change Claude Code's own interface
 * (`statusLine`, `theme`, `spinnerTipsEnabled`…) are ignored without one.
 */
export const UNSUPPORTED_KEYS: Readonly<Record<string, string>> = {
  env: 'environment variables for the session are not set (Bash and hooks get the filtered environment, docs/security.md)',
  sandbox:
    'there is no OS-level sandbox for Bash; the tools stay confined to the working directory and --add-dir',
  apiKeyHelper: 'the API key comes from ANTHROPIC_API_KEY only',
  outputStyle: 'output styles do not change the system prompt here (use --append-system-prompt)',
};

/** A settings file that cannot be used: the file and the field are named. */
export class SettingsError extends Error {
  readonly code = 'SETTINGS_INVALID';
  constructor(
    readonly file: string,
    readonly field: string | null,
    readonly detail: string,
  ) {
    super(`settings ${file}${field ? `: ${field}` : ''}: ${detail}`);
    this.name = 'SettingsError';
  }
}

function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : `${s ? '.' : ''}${String(p)}`;
  return s;
}

/** Checks the keys reloop reads; throws a SettingsError naming the first bad field. */
export function checkSettings(json: unknown, file: string): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw new SettingsError(file, null, 'the file must hold a JSON object');
  const parsed = SettingsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SettingsError(file, fieldPath(issue.path) || null, issue.message);
  }
  return json as Record<string, unknown>;
}

/** A JSON.parse error as one line, with `line L, column C` when the message gives a position. */
export function jsonErrorWhere(text: string, e: unknown): string {
  const message = (e instanceof Error ? e.message : String(e)).split('\n')[0]!;
  const m = /^(.*?)(?: in JSON)? at position (\d+)/.exec(message);
  if (!m) return message;
  const at = Number(m[2]);
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - before.lastIndexOf('\n');
  return `${m[1]} at line ${line}, column ${column}`;
}
