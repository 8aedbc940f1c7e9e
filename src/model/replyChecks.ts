import { MAX_JSON_DEPTH, nestedDeeperThan } from '../lib/jsonDepth.ts';
import { type ContentBlock, ContentBlockSchema, type StopReason, StopReasonSchema } from './messages.ts';
import { ModelCallError, type ModelFailure } from './types.ts';

/*
 * Replies the loop cannot act on safely. Each is a deliberate, documented outcome (docs/architecture.md,
 * "Model replies"): a fatal model error (the run ends `model_error`, not retried: the same server
 * answers the same way again) whose message says what was wrong — never a reply quietly reshaped
 * into one the loop can use.
 */

export const INVALID_REPLY = 'invalid_reply';

function invalid(message: string): ModelCallError {
  const failure: ModelFailure = { kind: 'fatal', overloaded: false, errorType: INVALID_REPLY, message };
  return new ModelCallError(failure);
}

const KNOWN_TYPES: ReadonlySet<string> = new Set<string>(
  ContentBlockSchema.options.flatMap((o) => {
    const t = o.shape.type;
    return 'options' in t ? [...t.options] : [t.value];
  }),
);

/** Two tool_use blocks with one id: their results could not be told apart. Null when ids are unique. */
export function toolUseIdClash(content: readonly ContentBlock[]): string | null {
  const seen = new Map<string, string>();
  for (const b of content) {
    if (b.type !== 'tool_use') continue;
    const first = seen.get(b.id);
    if (first !== undefined) {
      return `the reply has two tool_use blocks with id ${JSON.stringify(b.id)} (${first} and ${b.name}): their results could not be told apart, so neither is run`;
    }
    seen.set(b.id, b.name);
  }
  return null;
}

/**
 * A block nested deeper than MAX_JSON_DEPTH (a tool input of `{"a":{"a":…}}` thousands deep): every
 * walk after this one (the redactor, the seal's JSON, the viewer) would have to survive it, so it
 * is refused here, checked without recursion. Null when the block is fine.
 */
export function tooDeepBlock(blocks: readonly unknown[]): { index: number; message: string } | null {
  for (const [index, block] of blocks.entries()) {
    if (!nestedDeeperThan(block, MAX_JSON_DEPTH)) continue;
    const type = (block as { type?: unknown } | null)?.type;
    const message = `the reply's content block ${index} (${JSON.stringify(typeof type === 'string' ? type : null)}) is nested deeper than ${MAX_JSON_DEPTH} levels: no real tool input is, and nothing in the reply is run`;
    return { index, message };
  }
  return null;
}

/** The fatal error for a reply whose content nests too deep (see tooDeepBlock). */
export function tooDeepReply(deep: { message: string }): ModelCallError {
  return invalid(deep.message);
}

/**
 * The content blocks and stop reason of a reply, or a fatal ModelCallError saying why they cannot
 * be used: a block of a type this version does not know (it is not dropped: nothing is run, the
 * run stops), a known block of the wrong shape, duplicate tool_use ids, a stop_reason that is
 * missing or unknown (the loop cannot tell whether the turn is complete), content nested too deep.
 */
export function readReply(
  blocks: readonly unknown[],
  stopReason: unknown,
): { content: ContentBlock[]; stopReason: StopReason } {
  const deep = tooDeepBlock(blocks);
  if (deep) throw tooDeepReply(deep);
  const content: ContentBlock[] = [];
  for (const [i, block] of blocks.entries()) {
    const parsed = ContentBlockSchema.safeParse(block);
    if (parsed.success) {
      content.push(parsed.data);
      continue;
    }
    const type = (block as { type?: unknown } | null)?.type;
    if (typeof type === 'string' && !KNOWN_TYPES.has(type)) {
      throw invalid(
        `the reply holds a content block of type ${JSON.stringify(type)} (block ${i}), which this version of reloop does not know; it is not dropped silently: the run stops, nothing in the reply is run`,
      );
    }
    const issue = parsed.error.issues[0];
    throw invalid(
      `the reply's content block ${i} (${JSON.stringify(type)}) is malformed: ${issue?.path.join('.') || '(block)'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  const clash = toolUseIdClash(content);
  if (clash) throw invalid(clash);
  if (stopReason === null || stopReason === undefined) {
    throw invalid(
      'the reply ended without a stop_reason: the stream did not finish as the Messages API does',
    );
  }
  const stop = StopReasonSchema.safeParse(stopReason);
  if (!stop.success) {
    throw invalid(
      `the reply's stop_reason ${JSON.stringify(stopReason)} is not one reloop knows (${StopReasonSchema.options.join(', ')}): it cannot tell whether the turn is complete`,
    );
  }
  return { content, stopReason: stop.data };
}

/** A reply without usage: tokens and cost cannot be counted, so budgets could not hold. */
export function missingUsage(where: string): ModelCallError {
  return invalid(
    `the reply has no usage (${where}): reloop cannot count its tokens or cost, so budgets could not hold; the server is not the Messages API, or something between strips it`,
  );
}

/** A 2xx answer that is not an event stream: a web page or a proxy's error page, not the API. */
export function notAnEventStream(
  status: number,
  contentType: string | null,
  baseURL: string,
): ModelCallError {
  return invalid(
    `the server answered ${status} with ${contentType ? `content-type ${contentType}` : 'no content-type'}, not an event stream: ${baseURL} does not look like the Messages API (check ANTHROPIC_BASE_URL)`,
  );
}
