import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../lib/errors.ts';
import { appendTo } from '../runtime/systemPrompt.ts';
import { UsageError } from './io.ts';

/** Claude Code's system prompt flags, as `run` and `submit` take them. */
export interface SystemPromptFlags {
  systemPrompt?: string;
  systemPromptFile?: string;
  appendSystemPrompt?: string;
  appendSystemPromptFile?: string;
}

/**
 * The system prompt the flags ask for, or undefined for reloop's default: `--system-prompt` (or
 * the content of `--system-prompt-file`) replaces it, `--append-system-prompt` (or its file) adds
 * to it, after a blank line — to the default, or to the replacement. Relative files are read from
 * the current directory, as the shell gave them. Both forms of one flag at once is bad usage.
 */
export async function systemPromptOf(
  flags: SystemPromptFlags,
  defaultPrompt: string,
): Promise<string | undefined> {
  const base = await textOf(flags.systemPrompt, flags.systemPromptFile, '--system-prompt');
  const extra = await textOf(
    flags.appendSystemPrompt,
    flags.appendSystemPromptFile,
    '--append-system-prompt',
  );
  if (base === undefined && extra === undefined) return undefined;
  return appendTo(base ?? defaultPrompt, extra);
}

async function textOf(text: string | undefined, file: string | undefined, flag: string) {
  if (text !== undefined && file !== undefined)
    throw new UsageError(`${flag} and ${flag}-file cannot be used together`);
  if (file === undefined) return text;
  try {
    return await readFile(path.resolve(file), 'utf8');
  } catch (e) {
    throw new UsageError(
      `${flag}-file ${file}: cannot be read (${messageOf(e)})`,
      'SYSTEM_PROMPT_UNREADABLE',
    );
  }
}
