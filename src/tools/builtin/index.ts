import type { AnyTool } from '../types.ts';
import { type BashToolOptions, bashTool } from './bash.ts';
import { bashOutputTool, killShellTool } from './bashOutput.ts';
import type { BuiltinToolOptions } from './common.ts';
import { editTool } from './edit.ts';
import { globTool } from './glob.ts';
import { type GrepToolOptions, grepTool } from './grep.ts';
import { readTool } from './read.ts';
import { todoWriteTool } from './todoWrite.ts';
import { type WebFetchToolOptions, webFetchTool } from './webFetch.ts';
import { writeTool } from './write.ts';

export type { BashToolOptions } from './bash.ts';
export { bashTool } from './bash.ts';
export { bashOutputTool, killShellTool } from './bashOutput.ts';
export type { BuiltinToolOptions } from './common.ts';
export { editTool } from './edit.ts';
export { globTool } from './glob.ts';
export { type GrepToolOptions, grepTool } from './grep.ts';
export { readTool } from './read.ts';
export { todoWriteTool } from './todoWrite.ts';
export { type FetchedPage, pageWithPrompt, type WebFetchToolOptions, webFetchTool } from './webFetch.ts';
export { writeTool } from './write.ts';

export interface BuiltinToolsOptions extends BuiltinToolOptions {
  bash?: BashToolOptions;
  grep?: Omit<GrepToolOptions, keyof BuiltinToolOptions>;
  webFetch?: WebFetchToolOptions;
}

/**
 * The coding tools every session gets: Read, Write, Edit, Bash (with background shells:
 * BashOutput, KillShell), Glob, Grep, TodoWrite and WebFetch.
 */
export function builtinTools(opts: BuiltinToolsOptions = {}): AnyTool[] {
  const { bash, grep, webFetch, ...paths } = opts;
  return [
    readTool(paths),
    writeTool(paths),
    editTool(paths),
    bashTool(bash),
    bashOutputTool(),
    killShellTool(),
    globTool(paths),
    grepTool({ ...paths, ...grep }),
    todoWriteTool(),
    webFetchTool(webFetch),
  ];
}
