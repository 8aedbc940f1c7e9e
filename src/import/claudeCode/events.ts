import type { ContentBlock, Message, StopReason } from '../../model/messages.ts';

/**
 * A transcript line as the mapper sees it: classified once, by `classifyLine`, into what it
 * means for the query loop. `line` is the 1-based line number in the file, `at` the line's
 * timestamp in ms (a line without one takes its neighbour's).
 */
interface At {
  line: number;
  at: number;
}

/** Token counts as a transcript line gives them (the API's `usage`, snake_case). */
export interface RawUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

export type TranscriptEvent =
  /** Something the person typed: opens a run. */
  | (At & { kind: 'prompt'; message: Message; text: string })
  /** A user line that only adds to the history (isMeta, slash-command wrappers, bash mode). */
  | (At & { kind: 'userMeta'; message: Message })
  /** An assistant line that is no model response (`model: "<synthetic>"`): history only. */
  | (At & { kind: 'syntheticAssistant'; message: Message })
  /** `[Request interrupted by user…]`. */
  | (At & { kind: 'interrupt'; message: Message })
  /** A stop hook's block message, appended for the model (`Stop hook feedback:…`). */
  | (At & { kind: 'stopFeedback'; message: Message; reason: string })
  /** The summary a compaction left (`isCompactSummary`, or the "continued from" preamble). */
  | (At & { kind: 'compactSummary'; message: Message; text: string })
  /** A user line answering tool_use blocks; `agentIds` maps a Task call to the sub-agent it ran. */
  | (At & { kind: 'toolResults'; blocks: ContentBlock[]; agentIds: [toolUseId: string, agentId: string][] })
  /** One streamed chunk of an assistant response; chunks sharing `id` are one response. */
  | (At & {
      kind: 'assistant';
      id: string;
      model: string;
      blocks: ContentBlock[];
      stopReason: StopReason | null;
      usage: RawUsage | null;
    })
  /** `isApiErrorMessage`: a model call that failed (after Claude Code's own retries, or before one). */
  | (At & { kind: 'apiError'; text: string; status: number | null; errorType: string | null })
  /** `system` / `api_error`: one retry of a failing call. */
  | (At & {
      kind: 'apiRetry';
      status: number | null;
      message: string;
      retryInMs: number | null;
      attempt: number | null;
      maxRetries: number | null;
    })
  /** `system` / `compact_boundary`. */
  | (At & {
      kind: 'compactBoundary';
      trigger: string | null;
      preTokens: number | null;
      postTokens: number | null;
    })
  /** `system` / `stop_hook_summary`. */
  | (At & {
      kind: 'stopHookSummary';
      prevented: boolean;
      stopReason: string | null;
      commands: string[];
      errors: string[];
      durationMs: number;
    })
  /** Counted, not mapped (progress, snapshots, titles…); may carry a sub-agent link or a title. */
  | (At & {
      kind: 'bookkeeping';
      lineType: string;
      agentLink?: { agentId: string; toolUseId: string };
      title?: { text: string; rank: number };
    })
  /** A line the importer cannot map, or a part of one it had to leave out. */
  | (At & { kind: 'unmapped'; lineType: string; why: string; text: string })
  /** A line that is not a JSON object. */
  | (At & { kind: 'malformed'; why: string; text: string });

export type EventKind = TranscriptEvent['kind'];
export type EventOf<K extends EventKind> = Extract<TranscriptEvent, { kind: K }>;
