import { z } from 'zod';
import { nestedDeeperThan } from '../lib/jsonDepth.ts';
import { ToolResultContentSchema } from '../model/messages.ts';
import { withCost } from '../model/pricing.ts';
import { readReply } from '../model/replyChecks.ts';
import { ScriptResponseSchema } from '../model/script.ts';
import { type ModelResponse, ModelResponseSchema } from '../model/types.ts';
import type { RecordData } from '../store/records.ts';

/**
 * The files a counterfactual fork takes (`reloop fork --response`, `--tool-result`): read and
 * checked here, so a bad one is refused before any fork is written, with the file and the problem.
 */

export class ReplacementFileError extends Error {
  readonly code = 'REPLACEMENT_INVALID';
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}`);
    this.name = 'ReplacementFileError';
  }
}

function issueText(issue: z.core.$ZodIssue | undefined): string {
  if (!issue) return 'invalid';
  return `${issue.path.join('.') || '(root)'}: ${issue.message}`;
}

function parseJson(text: string, file: string): unknown {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ReplacementFileError(file, `not valid JSON (${(e as Error).message})`);
  }
  if (nestedDeeperThan(raw))
    throw new ReplacementFileError(file, 'nested too deep to be a model response or a tool result');
  return raw;
}

/**
 * A model response, in either of two shapes: a response turn of a script file
 * (docs/script-format.md: `{ content | text, stop_reason, usage? }` with the API's snake_case
 * usage), or the log's own (`model.responded`'s `response`, as `reloop log --json` prints it:
 * `{ id, model, content, stopReason, usage }`). Its content is checked as a server's reply is
 * (known block types, distinct tool_use ids, a stop_reason). `model` prices a script turn's usage.
 */
export function parseResponseFile(
  text: string,
  file: string,
  defaults: { id: string; model: string },
): ModelResponse {
  const raw = parseJson(text, file);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new ReplacementFileError(file, 'a model response is a JSON object');
  if ('error' in raw || 'abort' in raw)
    throw new ReplacementFileError(
      file,
      'an API error or an abort is not a response: a fork replaces a response with another response',
    );
  const reply = (blocks: unknown[], stopReason: unknown) => {
    try {
      return readReply(blocks, stopReason);
    } catch (e) {
      throw new ReplacementFileError(file, (e as Error).message);
    }
  };
  if ('stopReason' in raw) {
    const parsed = ModelResponseSchema.safeParse(raw);
    if (!parsed.success) throw new ReplacementFileError(file, issueText(parsed.error.issues[0]));
    const { content, stopReason } = reply(parsed.data.content, parsed.data.stopReason);
    return { ...parsed.data, content, stopReason };
  }
  const parsed = ScriptResponseSchema.safeParse(raw);
  if (!parsed.success) throw new ReplacementFileError(file, issueText(parsed.error.issues[0]));
  const turn = parsed.data;
  const blocks = [
    ...(turn.text !== undefined ? [{ type: 'text', text: turn.text }] : []),
    ...(turn.content ?? []),
  ];
  const { content, stopReason } = reply(blocks, turn.stop_reason);
  const u = turn.usage;
  return {
    id: defaults.id,
    model: defaults.model,
    content,
    stopReason,
    usage: withCost(defaults.model, {
      inputTokens: u?.input_tokens ?? 0,
      outputTokens: u?.output_tokens ?? 0,
      cacheReadInputTokens: u?.cache_read_input_tokens ?? 0,
      cacheCreationInputTokens: u?.cache_creation_input_tokens ?? 0,
    }),
  };
}

const ToolResultFileSchema = z.strictObject({
  content: ToolResultContentSchema,
  is_error: z.boolean().optional(),
});

export type ToolResultReplacement = Pick<RecordData<'tool.finished'>, 'result' | 'outcome'>;

/**
 * A tool's result: a `.json` file is `{ content, is_error? }` (content a string or the API's
 * tool_result content blocks); any other file is the result's text, as it is. The outcome follows:
 * `error` when `is_error`, else `ok`.
 */
export function parseToolResultFile(text: string, file: string): ToolResultReplacement {
  if (!file.toLowerCase().endsWith('.json'))
    return { result: { content: text, isError: false }, outcome: 'ok' };
  const raw = parseJson(text, file);
  const parsed = ToolResultFileSchema.safeParse(raw);
  if (!parsed.success)
    throw new ReplacementFileError(
      file,
      `a .json tool result is { "content": …, "is_error"?: boolean } (${issueText(parsed.error.issues[0])}); ` +
        'give the text in a file of another extension to use it as it is',
    );
  const isError = parsed.data.is_error ?? false;
  return {
    result: { content: parsed.data.content as ToolResultReplacement['result']['content'], isError },
    outcome: isError ? 'error' : 'ok',
  };
}
