import { bashTool } from '../../src/tools/builtin/bash.ts';
import { createPermissionPolicy, type PermissionPolicyOptions } from '../../src/tools/permissions/index.ts';
import type { PermissionResult } from '../../src/tools/types.ts';

const bash = bashTool();

/** What the permission policy decides for one Bash command, run from `/repo` (nothing is run). */
export async function decideBash(
  opts: Omit<PermissionPolicyOptions, 'cwd'>,
  command: string,
): Promise<PermissionResult> {
  return createPermissionPolicy({ ...opts, cwd: '/repo' })({
    tool: bash,
    input: { command },
    toolUseId: 't',
    cwd: '/repo',
  });
}
