import { z } from 'zod';
import type { AnyTool, PermissionResult } from '../types.ts';

/** Claude Code's modes; `dontAsk` denies whatever no rule allows (nobody is asked). */
export const PermissionModeSchema = z.enum([
  'default',
  'acceptEdits',
  'bypassPermissions',
  'plan',
  'dontAsk',
]);
export type PermissionMode = z.infer<typeof PermissionModeSchema>;

/** Tools that change files and nothing else: what `acceptEdits` lets through without asking. */
export const FILE_EDIT_TOOLS: ReadonlySet<string> = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

/**
 * What the mode alone says about a call no rule decided. Paths outside cwd never get here: the
 * policy denies them first, whatever the mode.
 */
export function modeDecision(mode: PermissionMode, tool: AnyTool): PermissionResult {
  const by = `mode:${mode}`;
  switch (mode) {
    case 'bypassPermissions':
      return { behavior: 'allow', by };
    case 'plan':
      return tool.isReadOnly
        ? { behavior: 'allow', by }
        : {
            behavior: 'deny',
            message: `Plan mode is read-only: ${tool.name} is not available until the plan is accepted.`,
            by,
          };
    case 'acceptEdits':
      if (tool.isReadOnly || FILE_EDIT_TOOLS.has(tool.name)) return { behavior: 'allow', by };
      return { behavior: 'ask', message: `Allow ${tool.name}?`, by };
    case 'default':
      if (tool.isReadOnly) return { behavior: 'allow', by };
      return { behavior: 'ask', message: `Allow ${tool.name}?`, by };
    case 'dontAsk':
      if (tool.isReadOnly) return { behavior: 'allow', by };
      return {
        behavior: 'deny',
        message: `${tool.name} needs a rule that allows it: the permission mode is dontAsk.`,
        by,
      };
  }
}
