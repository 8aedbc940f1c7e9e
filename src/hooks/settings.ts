import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import type { PermissionRequest, PreToolUseDecision, ToolHooks } from '../tools/types.ts';
import { createCommandPreToolUseHook, createCommandStopHook } from './commandHooks.ts';
import type { StopHook } from './types.ts';

export class HookSettingsError extends Error {
  readonly code = 'INVALID_HOOK_SETTINGS';
  constructor(
    readonly file: string,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${file}: ${field}: ${detail}`);
    this.name = 'HookSettingsError';
  }
}

const HookSchema = z
  .looseObject({
    type: z.string().min(1),
    command: z.string().optional(),
    /** Seconds, as in Claude Code settings. */
    timeout: z.number().positive().optional(),
  })
  .superRefine((h, ctx) => {
    if (h.type === 'command' && !h.command?.trim()) {
      ctx.addIssue({
        code: 'custom',
        path: ['command'],
        message: 'a command hook needs a non-empty command',
      });
    }
  });

const MatcherGroupSchema = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(HookSchema),
});

// Loose objects: a Claude Code settings file carries much else (permissions, env, other events).
const SettingsSchema = z.looseObject({
  hooks: z
    .looseObject({
      PreToolUse: z.array(MatcherGroupSchema).optional(),
      Stop: z.array(MatcherGroupSchema).optional(),
    })
    .optional(),
});
type MatcherGroup = z.infer<typeof MatcherGroupSchema>;

export interface HookSettings {
  stopHooks: StopHook[];
  toolHooks: ToolHooks;
  /** Parts of the file that are valid but not supported here (other events, non-command hooks). */
  warnings: string[];
}

export interface HookSettingsOptions {
  /** Where hook commands run; defaults to the cwd of each event. */
  cwd?: string;
  sessionId?: string;
  onError?: (message: string) => void;
  killGraceMs?: number;
  /** Secret variables the hooks may see after all (src/lib/secrets.ts). */
  passEnv?: readonly string[];
}

function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : `${s ? '.' : ''}${String(p)}`;
  return s || '(root)';
}

/** Claude Code matchers are regexes on the tool name, whole-name; empty or `*` means every tool. */
function compileMatcher(file: string, where: string, matcher: string | undefined): (tool: string) => boolean {
  if (matcher === undefined || matcher === '' || matcher === '*') return () => true;
  try {
    const re = new RegExp(`^(?:${matcher})$`);
    return (tool) => re.test(tool);
  } catch (e) {
    throw new HookSettingsError(file, where, `invalid matcher regex (${e instanceof Error ? e.message : e})`);
  }
}

/** Several hooks may match one call; they run in parallel and the strictest answer wins. */
function combine(decisions: PreToolUseDecision[]): PreToolUseDecision {
  const deny = decisions.filter((d) => d.decision === 'deny');
  if (deny.length) return { decision: 'deny', reason: deny.map((d) => d.reason ?? 'denied').join('\n') };
  const allow = decisions.find((d) => d.decision === 'allow');
  if (allow) return allow;
  const reasons = decisions.map((d) => d.reason).filter((r): r is string => !!r);
  return reasons.length ? { decision: 'continue', reason: reasons.join('\n') } : { decision: 'continue' };
}

/** Builds hooks from an already parsed settings object; `file` only names it in errors. */
export function hookSettingsFrom(json: unknown, file: string, opts: HookSettingsOptions = {}): HookSettings {
  const parsed = SettingsSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HookSettingsError(file, fieldPath(issue?.path ?? []), issue?.message ?? 'invalid');
  }
  const hooks = parsed.data.hooks ?? {};
  const warnings = Object.keys(hooks)
    .filter((k) => k !== 'PreToolUse' && k !== 'Stop')
    .map((k) => `${file}: hooks.${k} is not supported and was ignored`);
  const commands = (event: string, groups: MatcherGroup[] | undefined) =>
    (groups ?? []).flatMap((g, gi) =>
      g.hooks.flatMap((h, hi) => {
        const where = `hooks.${event}[${gi}]`;
        if (h.type !== 'command' || !h.command) {
          warnings.push(`${file}: ${where}.hooks[${hi}] has type ${JSON.stringify(h.type)}, not supported`);
          return [];
        }
        const timeoutMs = h.timeout === undefined ? undefined : h.timeout * 1000;
        return [
          { command: h.command, timeoutMs, matches: compileMatcher(file, `${where}.matcher`, g.matcher) },
        ];
      }),
    );

  const base = { cwd: opts.cwd, killGraceMs: opts.killGraceMs, passEnv: opts.passEnv };
  const stopHooks = commands('Stop', hooks.Stop).map((c) =>
    createCommandStopHook(c.command, { ...base, timeoutMs: c.timeoutMs }),
  );
  const pre = commands('PreToolUse', hooks.PreToolUse).map((c) => ({
    matches: c.matches,
    run: createCommandPreToolUseHook(c.command, {
      ...base,
      timeoutMs: c.timeoutMs,
      sessionId: opts.sessionId,
      onError: opts.onError,
    }),
  }));
  const toolHooks: ToolHooks = {};
  if (pre.length) {
    toolHooks.preToolUse = async (req: PermissionRequest) => {
      const matching = pre.filter((p) => p.matches(req.tool.name));
      if (matching.length === 0) return { decision: 'continue' };
      return combine(await Promise.all(matching.map((p) => p.run(req))));
    };
  }
  return { stopHooks, toolHooks, warnings };
}

/** Reads and validates a Claude-Code-like settings file; errors name the file and the bad field. */
export async function loadHookSettings(file: string, opts: HookSettingsOptions = {}): Promise<HookSettings> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new HookSettingsError(file, '(file)', `cannot read: ${e instanceof Error ? e.message : e}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new HookSettingsError(file, '(file)', `not valid JSON: ${e instanceof Error ? e.message : e}`);
  }
  return hookSettingsFrom(json, file, opts);
}
