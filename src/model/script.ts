import { z } from 'zod';
import { ContentBlockSchema, StopReasonSchema } from './messages.ts';
import { tooDeepBlock, toolUseIdClash } from './replyChecks.ts';

/**
 * The scripted model's input: what a Messages API server would answer, in request order
 * (turn requests and compaction requests alike). See docs/script-format.md.
 */
const ScriptUsageSchema = z.strictObject({
  input_tokens: z.number().int().nonnegative().default(0),
  output_tokens: z.number().int().nonnegative().default(0),
  cache_read_input_tokens: z.number().int().nonnegative().default(0),
  cache_creation_input_tokens: z.number().int().nonnegative().default(0),
});

const Purpose = z.enum(['turn', 'compaction']).optional();

export const ScriptResponseSchema = z
  .strictObject({
    /** Full content blocks, as the API returns them. */
    content: z.array(ContentBlockSchema).optional(),
    /** Shorthand for one text block (before any `content` blocks). */
    text: z.string().optional(),
    stop_reason: StopReasonSchema.nullable().default('end_turn'),
    usage: ScriptUsageSchema.optional(),
    /** Fail loudly if the loop sends a request of the other purpose for this entry. */
    for: Purpose,
  })
  .refine((r) => r.content !== undefined || r.text !== undefined, {
    message: 'a response needs `content` or `text`',
  });

export const ScriptErrorSchema = z.strictObject({
  error: z.strictObject({
    /** HTTP status; omit for a transport failure (connection reset, timeout). */
    status: z.number().int().min(100).max(599).optional(),
    type: z.string().optional(),
    message: z.string().default('scripted error'),
    retry_after_ms: z.number().nonnegative().optional(),
  }),
  for: Purpose,
});

/** The user aborts while this response streams (the session's abort is called). */
export const ScriptAbortSchema = z.strictObject({ abort: z.literal(true), for: Purpose });

export const ScriptTurnSchema = z.union([ScriptErrorSchema, ScriptAbortSchema, ScriptResponseSchema]);

/** A sub-agent's part of a script: its own turns, in its own request order. */
export const ChildScriptSchema = z.strictObject({
  model: z.string().optional(),
  turns: z.array(ScriptTurnSchema),
});

export const ScriptSchema = z.strictObject({
  /** Model name reported in responses (prices come from it); default: the requested model. */
  model: z.string().optional(),
  turns: z.array(ScriptTurnSchema),
  /**
   * Sub-agents' scripts, by the id of the `Task` tool_use that starts each one: children run
   * in parallel, so each answers from its own list, whatever order their requests come in.
   */
  children: z.record(z.string(), ChildScriptSchema).optional(),
});

export type Script = z.infer<typeof ScriptSchema>;
export type ScriptTurn = z.infer<typeof ScriptTurnSchema>;

export class ScriptError extends Error {
  readonly code = 'SCRIPT_INVALID';
  constructor(
    readonly where: { file?: string; turn?: number },
    detail: string,
  ) {
    const at = [where.file, where.turn !== undefined ? `turn ${where.turn}` : undefined]
      .filter(Boolean)
      .join(', ');
    super(`script${at ? ` (${at})` : ''}: ${detail}`);
    this.name = 'ScriptError';
  }
}

/** Validates a parsed script; errors name the turn (1-based) and the field. */
export function parseScript(raw: unknown, file?: string): Script {
  const parsed = ScriptSchema.safeParse(raw);
  if (parsed.success) {
    const check = (turns: readonly ScriptTurn[], where: string | undefined) =>
      turns.forEach((turn, i) => {
        const blocks = 'content' in turn && turn.content ? turn.content : [];
        const deep = tooDeepBlock(blocks);
        if (deep)
          throw new ScriptError({ file: where, turn: i + 1 }, `content.${deep.index}: ${deep.message}`);
        const clash = toolUseIdClash(blocks);
        if (clash) throw new ScriptError({ file: where, turn: i + 1 }, `content: ${clash}`);
      });
    check(parsed.data.turns, file);
    for (const [id, child] of Object.entries(parsed.data.children ?? {}))
      check(child.turns, `${file ?? 'script'}, children[${JSON.stringify(id)}]`);
    return parsed.data;
  }
  const issue = turnIssue(raw, parsed.error.issues[0]!);
  const [first, index, ...rest] = issue.path;
  const turn = first === 'turns' && typeof index === 'number' ? index + 1 : undefined;
  const field = (turn !== undefined ? rest : issue.path).join('.') || '(root)';
  throw new ScriptError({ file, turn }, `${field}: ${issue.message}`);
}

/**
 * A turn matching no branch of the union gets zod's vague "Invalid input" (or the issue of
 * whichever branch it guessed): report it against the branch its keys select instead, so the
 * message names the field that is wrong.
 */
function turnIssue(raw: unknown, issue: z.core.$ZodIssue): { path: PropertyKey[]; message: string } {
  const [first, index] = issue.path;
  if (first !== 'turns' || typeof index !== 'number' || issue.path.length !== 2) return issue;
  const turn = (raw as { turns?: unknown[] }).turns?.[index];
  if (typeof turn !== 'object' || turn === null) return issue;
  const branch =
    'error' in turn ? ScriptErrorSchema : 'abort' in turn ? ScriptAbortSchema : ScriptResponseSchema;
  const checked = branch.safeParse(turn);
  if (checked.success) return issue;
  const own = checked.error.issues[0]!;
  return { path: ['turns', index, ...own.path], message: own.message };
}

export function parseScriptText(text: string, file?: string): Script {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ScriptError({ file }, `not valid JSON (${(e as Error).message})`);
  }
  return parseScript(raw, file);
}
