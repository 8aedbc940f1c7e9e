import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../lib/errors.ts';
import {
  HookSettingsError,
  hooksFromLayers,
  type LoadedHooks,
  mergeHooks,
  type SettingsLayer,
} from './config.ts';
import type { HookEvent } from './events.ts';
import type { HooksOption } from './types.ts';

/**
 * `--settings <file or JSON text>` as one settings layer (source `flagSettings`; a relative file
 * is the process's, as any command-line path). The settings loader (src/settings/) reads every
 * source; this reads the one the command line names. `root`: the project it is used for.
 */
export async function flagSettingsLayer(value: string, root: string): Promise<SettingsLayer> {
  if (value.trim().startsWith('{')) {
    return { source: 'flagSettings', file: null, root, json: parseJson(value, '--settings (inline JSON)') };
  }
  const file = path.resolve(value);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new HookSettingsError(file, '(file)', `cannot read: ${messageOf(e)}`);
  }
  return { source: 'flagSettings', file, root, json: parseJson(text, file) };
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new HookSettingsError(where, '(file)', `not valid JSON: ${messageOf(e)}`);
  }
}

/** Commands given on the command line (`--stop-hook`) as hooks of one event, source `cliArg`. */
export function commandLineHooks(event: HookEvent, commands: readonly string[]): HooksOption {
  if (commands.length === 0) return {};
  return {
    [event]: [{ hooks: commands.map((command) => ({ type: 'command', command })), source: 'cliArg' }],
  };
}

/**
 * The hooks of a run: every settings layer's (the settings loader's, src/settings, lowest
 * precedence first) and `--stop-hook`'s, as one `SessionOptions.hooks`.
 */
export function runHooksFromLayers(
  layers: readonly SettingsLayer[],
  stopHook: readonly string[],
): LoadedHooks {
  const loaded = hooksFromLayers(layers);
  return { hooks: mergeHooks(loaded.hooks, commandLineHooks('Stop', stopHook)), warnings: loaded.warnings };
}

/** The hooks of a CLI run (or a worker's) whose only settings source is `--settings`. */
export async function runHooksFromFlags(args: {
  settings?: string;
  stopHook: readonly string[];
  cwd: string;
}): Promise<LoadedHooks> {
  const layers = args.settings ? [await flagSettingsLayer(args.settings, args.cwd)] : [];
  return runHooksFromLayers(layers, args.stopHook);
}
