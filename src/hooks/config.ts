import { z } from 'zod';
import { EVENTS_NOT_FIRED, type HookEvent, isHookEvent } from './events.ts';
import { compileMatcher, MatcherSyntaxError } from './matcher.ts';
import type { CommandHookSpec, HookCallback, HookMatcherGroup, HooksOption } from './types.ts';

/**
 * One source of settings, as the settings loader hands them over (lowest precedence first):
 * Claude Code's source name (`userSettings`, `projectSettings`, `localSettings`, `flagSettings`,
 * `policySettings`), the file (null for JSON given inline), the project root it belongs to, and
 * its parsed JSON.
 */
export interface SettingsLayer {
  source: string;
  file: string | null;
  root: string;
  json: unknown;
}

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

const HandlerSchema = z
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

const GroupSchema = z.looseObject({
  matcher: z.string().optional(),
  hooks: z.array(HandlerSchema),
});

// Loose: a settings file carries much else (permissions, env, statusLine, …) that is not ours.
const SettingsSchema = z.looseObject({
  hooks: z.record(z.string(), z.array(GroupSchema)).optional(),
  disableAllHooks: z.boolean().optional(),
  allowManagedHooksOnly: z.boolean().optional(),
});

function fieldPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : `${s ? '.' : ''}${String(p)}`;
  return s || '(root)';
}

export interface LoadedHooks {
  hooks: HooksOption;
  /** What was read but does not run here (other events, other hook types, unsupported fields). */
  warnings: string[];
}

const labelOf = (layer: SettingsLayer) => layer.file ?? `${layer.source} (inline JSON)`;

/**
 * The hooks of every settings layer, each group tagged with its source and file. A layer that
 * is not what Claude Code would accept (hooks not an object of arrays, a command hook without a
 * command, a bad timeout, a matcher that is not a valid regex) is an error naming the file and
 * the field: a guard hook silently dropped would let through what it guards.
 */
export function hooksFromLayers(layers: readonly SettingsLayer[]): LoadedHooks {
  const warnings: string[] = [];
  const parsed = layers.map((layer) => {
    const out = SettingsSchema.safeParse(layer.json);
    if (!out.success) {
      const issue = out.error.issues[0];
      throw new HookSettingsError(labelOf(layer), fieldPath(issue?.path ?? []), issue?.message ?? 'invalid');
    }
    return { layer, settings: out.data };
  });
  const policy = parsed.filter((p) => p.layer.source === 'policySettings');
  const policyOff = policy.some((p) => p.settings.disableAllHooks === true);
  const managedOnly = policy.some((p) => p.settings.allowManagedHooksOnly === true);
  const othersOff = parsed.some((p) => p.layer.source !== 'policySettings' && p.settings.disableAllHooks);
  const hooks: Partial<Record<HookEvent, HookMatcherGroup[]>> = {};
  for (const { layer, settings } of parsed) {
    const file = labelOf(layer);
    const managed = layer.source === 'policySettings';
    const off = policyOff || (!managed && (othersOff || managedOnly));
    for (const [event, groups] of Object.entries(settings.hooks ?? {})) {
      if (!isHookEvent(event)) {
        warnings.push(
          EVENTS_NOT_FIRED.has(event)
            ? `${file}: hooks.${event}: reloop never fires ${event} (no counterpart in this runtime); its hooks are ignored`
            : `${file}: hooks.${event} is not a hook event; ignored`,
        );
        continue;
      }
      groups.forEach((g, gi) => {
        const where = `hooks.${event}[${gi}]`;
        try {
          compileMatcher(g.matcher);
        } catch (e) {
          if (e instanceof MatcherSyntaxError)
            throw new HookSettingsError(file, `${where}.matcher`, e.message);
          throw e;
        }
        const commands: CommandHookSpec[] = [];
        g.hooks.forEach((h, hi) => {
          const entry = `${where}.hooks[${hi}]`;
          if (h.type !== 'command') {
            warnings.push(
              `${file}: ${entry} has type ${JSON.stringify(h.type)}: only command hooks run here; this one is ignored`,
            );
            return;
          }
          for (const w of unsupportedFields(h)) warnings.push(`${file}: ${entry}: ${w}`);
          commands.push({
            type: 'command',
            command: h.command!,
            ...(h.timeout !== undefined ? { timeout: h.timeout } : {}),
          });
        });
        if (off || commands.length === 0) return;
        const group: HookMatcherGroup = {
          ...(g.matcher !== undefined ? { matcher: g.matcher } : {}),
          hooks: commands,
          source: layer.source,
          ...(layer.file ? { file: layer.file } : {}),
        };
        const list = hooks[event] ?? [];
        list.push(group);
        hooks[event] = list;
      });
    }
  }
  if (policyOff) warnings.push('disableAllHooks is set by managed settings: no settings hook runs');
  else if (othersOff) warnings.push('disableAllHooks is set: only managed settings hooks run');
  else if (managedOnly) warnings.push('allowManagedHooksOnly is set: only managed settings hooks run');
  return { hooks, warnings };
}

/** Fields of a command hook that reloop reads but does not honour, each with what happens instead. */
function unsupportedFields(h: Record<string, unknown>): string[] {
  const out: string[] = [];
  if (h.async === true || h.asyncRewake === true)
    out.push('async hooks are not supported: it runs synchronously, and its decision counts');
  if (h.if !== undefined)
    out.push('the `if` filter is not supported: the hook runs for every occurrence its matcher matches');
  if (h.shell !== undefined && h.shell !== 'bash')
    out.push(`shell ${JSON.stringify(h.shell)}: it runs with bash`);
  return out;
}

/** Several hook sets as one: each event's groups, in order (settings first, then code's own). */
export function mergeHooks(...sets: (HooksOption | undefined)[]): HooksOption {
  const out: Partial<Record<HookEvent, HookMatcherGroup[]>> = {};
  for (const set of sets) {
    if (!set) continue;
    for (const [event, groups] of Object.entries(set) as [HookEvent, readonly HookMatcherGroup[]][]) {
      if (groups?.length) out[event] = [...(out[event] ?? []), ...groups];
    }
  }
  return out;
}

/** One hook as the recorded setup lists it. */
export interface HookDescription {
  source: string;
  event: HookEvent;
  matcher: string | null;
  command: string;
  /** Seconds; null: the event's default. */
  timeout: number | null;
}

export function isCommandHook(h: HookCallback | CommandHookSpec): h is CommandHookSpec {
  return typeof h === 'object' && h !== null && (h as CommandHookSpec).type === 'command';
}

/** How a hook is named in the log: its command, or `callback <function name>`. */
export function hookLabel(h: HookCallback | CommandHookSpec): string {
  if (isCommandHook(h)) return h.command;
  return h.name ? `callback ${h.name}` : 'callback';
}

/** Every hook of a set, in the order they are tried (the recorded setup's "hooks"). */
export function describeHooks(hooks: HooksOption): HookDescription[] {
  const out: HookDescription[] = [];
  for (const [event, groups] of Object.entries(hooks) as [HookEvent, readonly HookMatcherGroup[]][]) {
    for (const g of groups ?? []) {
      for (const h of g.hooks) {
        const timeout = isCommandHook(h) ? h.timeout : g.timeout;
        out.push({
          source: g.source ?? 'session',
          event,
          matcher: g.matcher ?? null,
          command: hookLabel(h),
          timeout: timeout ?? null,
        });
      }
    }
  }
  return out;
}
