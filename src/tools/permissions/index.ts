export { printable } from '../../lib/printable.ts';
export { analyseBash, type BashAnalysis } from './bashCommand.ts';
export type { CommandView } from './bashMatch.ts';
export { approvalQuestion } from './display.ts';
export { FILE_EDIT_TOOLS, modeDecision, type PermissionMode, PermissionModeSchema } from './modes.ts';
export { createPermissionPolicy, type PermissionPolicyOptions } from './policy.ts';
export {
  allowMatch,
  denyMatches,
  type PermissionRule,
  PermissionRuleError,
  parseRule,
  parseRules,
} from './rules.ts';
export { type ParsedShell, parseShell, type SimpleCommand, type Word } from './shellParse.ts';
