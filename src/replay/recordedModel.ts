import {
  ModelCallError,
  type ModelCallOptions,
  type ModelClient,
  type ModelRequest,
  type ModelResponse,
} from '../model/types.ts';
import type { LogRecord } from '../store/records.ts';
import { type RerunDivergence, readableDiff, requestDifference, requestsSeen } from './divergence.ts';
import { ReplayMismatchError } from './errors.ts';
import { type RecordedRequest, recordedRequests, requestOf } from './requests.ts';

export interface RecordedModelOptions {
  /** Told of a mismatch before the error is thrown (a rerun stops there). */
  onMismatch?: (divergence: RerunDivergence, diff: string) => void;
}

/**
 * A model client that answers from a recorded log, request by request: the k-th request it gets
 * is compared with the k-th request of the log (rebuilt from its setup and history,
 * requests.ts); the same one gets the recorded answer (the response, or the failure as a
 * ModelCallError), a different one a ReplayMismatchError naming where it differs.
 */
export class RecordedModelClient implements ModelClient {
  readonly kind = 'recorded';
  /** Turn responses given so far. */
  turns = 0;
  private readonly requests: Iterator<RecordedRequest>;
  private readonly seen = requestsSeen();
  private lastSeq = 0;
  private failed: ReplayMismatchError | null = null;

  constructor(
    records: Iterable<LogRecord>,
    private readonly options: RecordedModelOptions = {},
  ) {
    const self = this;
    function* counted(): Generator<LogRecord> {
      for (const r of records) {
        self.lastSeq = r.seq;
        yield r;
      }
    }
    this.requests = recordedRequests(counted());
  }

  async stream(request: ModelRequest, options: ModelCallOptions): Promise<ModelResponse> {
    if (this.failed) throw this.failed;
    if (options.signal?.aborted)
      throw new ModelCallError({ kind: 'aborted', overloaded: false, message: 'aborted' });
    const next = this.requests.next();
    if (next.done) {
      return this.mismatch({
        seq: this.lastSeq,
        kind: 'request',
        path: '',
        recorded: null,
        current: request,
      });
    }
    const recorded = next.value;
    const expected = requestOf(recorded);
    const d = requestDifference(recorded, expected, request, this.seen);
    if (d) return this.mismatch({ seq: recorded.seq, kind: 'request', ...d });
    const answer = recorded.answer;
    if (!answer) {
      // The log ends before the answer came (a crash while the request was out).
      return this.mismatch({
        seq: recorded.seq,
        kind: 'request',
        path: '',
        recorded: null,
        current: request,
      });
    }
    if (answer.type === 'model.failed') throw new ModelCallError(answer.data.failure);
    if (recorded.purpose === 'turn') this.turns++;
    return answer.data.response;
  }

  /** Sub-agents are not answered from their parent's log: a `Task` call's child gets nothing. */
  forChild(_toolUseId: string): ModelClient {
    return {
      kind: 'recorded',
      stream: async (request) =>
        this.mismatch({
          seq: this.lastSeq,
          kind: 'request',
          path: 'sub-agent',
          recorded: null,
          current: request,
        }),
    };
  }

  private mismatch(divergence: RerunDivergence): never {
    const diff = readableDiff(divergence.recorded, divergence.current);
    this.failed = new ReplayMismatchError(divergence, diff);
    this.options.onMismatch?.(divergence, diff);
    throw this.failed;
  }
}

/** `reloop/testing`: a ModelClient answering from `records` (a session's log); a changed request throws ReplayMismatchError. */
export function recordedModel(
  records: Iterable<LogRecord>,
  options: RecordedModelOptions = {},
): RecordedModelClient {
  return new RecordedModelClient(records, options);
}
