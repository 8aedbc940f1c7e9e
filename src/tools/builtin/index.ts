import type { AnyTool } from '../types.ts';
import { type BashToolOptions, bashTool } from './bash.ts';
import type { BuiltinToolOptions } from './common.ts';
import { editTool } from './edit.ts';
import { globTool } from './glob.ts';
import { type GrepToolOptions, grepTool } from './grep.ts';
import { readTool } from './read.ts';
import { writeTool } from './write.ts';

export type { BashToolOptions } from './bash.ts';
export { bashTool } from './bash.ts';
export type { BuiltinToolOptions } from './common.ts';
export { editTool } from './edit.ts';
export { globTool } from './glob.ts';
export { type GrepToolOptions, grepTool } from './grep.ts';
export { readTool } from './read.ts';
export { writeTool } from './write.ts';

export interface BuiltinToolsOptions extends BuiltinToolOptions {
  bash?: BashToolOptions;
  grep?: Omit<GrepToolOptions, keyof BuiltinToolOptions>;
}

/** The coding tools every session gets: Read, Write, Edit, Bash, Glob, Grep. */
export function builtinTools(opts: BuiltinToolsOptions = {}): AnyTool[] {
  const { bash, grep, ...paths } = opts;
  return [
    readTool(paths),
    writeTool(paths),
    editTool(paths),
    bashTool(bash),
    globTool(paths),
    grepTool({ ...paths, ...grep }),
  ];
}
