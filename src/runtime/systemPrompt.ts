import { DEFAULT_SYSTEM_PROMPT } from './config.ts';

/**
 * The library's system prompt, in the Claude Agent SDK's shape: a string replaces reloop's
 * default prompt; the preset is the default prompt, with `append` added after a blank line.
 * (`claude_code` is accepted as the preset's name too, as the SDK spells it.)
 */
export type SystemPromptOption =
  | string
  | { type?: 'preset'; preset: 'default' | 'claude_code'; append?: string };

/** The text the model is sent as `system`, as recorded in `run.started.config.system`. */
export function systemPromptText(option: SystemPromptOption): string {
  if (typeof option === 'string') return option;
  if (option.preset !== 'default' && option.preset !== 'claude_code')
    throw new TypeError(`systemPrompt.preset must be "default", got ${JSON.stringify(option.preset)}`);
  return appendTo(DEFAULT_SYSTEM_PROMPT, option.append);
}

/** `base`, then `extra` after a blank line (Claude Code's `--append-system-prompt`). */
export function appendTo(base: string, extra: string | undefined): string {
  if (extra === undefined || extra === '') return base;
  return base === '' ? extra : `${base}\n\n${extra}`;
}
