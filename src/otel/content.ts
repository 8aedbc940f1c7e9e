import type { Redactor } from '../lib/secrets.ts';
import type { ContentBlock, Message } from '../model/messages.ts';

/**
 * Conversation content in the shape the GenAI conventions define for `gen_ai.input.messages`,
 * `gen_ai.output.messages` and `gen_ai.system_instructions` (their JSON schemas: messages of
 * `role` and `parts`), recorded as JSON strings — the JavaScript SDK's span attributes hold no
 * nested values. Only ever built when the user opted in; every string goes through the redactor
 * first, as every log record does.
 */

type Part = Record<string, unknown> & { type: string };

function partOf(block: ContentBlock): Part {
  switch (block.type) {
    case 'text':
      return { type: 'text', content: block.text };
    case 'thinking':
      return { type: 'reasoning', content: block.thinking };
    case 'redacted_thinking':
      return { type: 'reasoning', content: '' };
    case 'tool_use':
      return { type: 'tool_call', id: block.id, name: block.name, arguments: block.input };
    case 'tool_result':
      return { type: 'tool_call_response', id: block.tool_use_id, response: block.content };
    default: {
      const b = block as Record<string, unknown> & { type: string };
      const source = b.source as { type?: string; media_type?: string; data?: string } | undefined;
      if ((b.type === 'image' || b.type === 'document') && source?.type === 'base64') {
        return { type: 'blob', modality: b.type, mime_type: source.media_type ?? null, content: source.data };
      }
      // A block the conventions have no part for: kept whole, as their GenericPart allows.
      return { ...b };
    }
  }
}

function partsOf(content: Message['content']): Part[] {
  return typeof content === 'string' ? [{ type: 'text', content }] : content.map(partOf);
}

/** A user message made only of tool results is the conventions' `tool` role. */
function roleOf(m: Message): string {
  if (m.role === 'user' && Array.isArray(m.content) && m.content.length > 0) {
    if (m.content.every((b) => b.type === 'tool_result')) return 'tool';
  }
  return m.role;
}

/** Anthropic's stop reasons in the conventions' finish-reason words (others kept as they are). */
const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_call',
  refusal: 'content_filter',
};

export class ContentEncoder {
  constructor(private readonly redactor: Redactor) {}

  private json(value: unknown): string {
    return JSON.stringify(this.redactor.redact(value));
  }

  inputMessages(messages: readonly Message[]): string {
    return this.json(messages.map((m) => ({ role: roleOf(m), parts: partsOf(m.content) })));
  }

  outputMessages(content: readonly ContentBlock[], stopReason: string | null): string {
    const finish = stopReason === null ? 'error' : (FINISH[stopReason] ?? stopReason);
    return this.json([{ role: 'assistant', parts: content.map(partOf), finish_reason: finish }]);
  }

  systemInstructions(system: string): string {
    return this.json([{ type: 'text', content: system }]);
  }

  /** Tool arguments and results: a string stays a string, anything else is JSON. */
  value(v: unknown): string {
    return typeof v === 'string' ? this.redactor.redactString(v) : this.json(v);
  }
}
