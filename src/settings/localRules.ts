import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode } from '../lib/errors.ts';
import { parseSettings } from './load.ts';
import type { RuleBehavior } from './permissions.ts';

/** The project's own, uncommitted settings file, where "don't ask again" answers go. */
export function localSettingsFile(projectRoot: string): string {
  return path.join(projectRoot, '.claude', 'settings.local.json');
}

/**
 * Adds a rule to `.claude/settings.local.json`, as Claude Code does when a person answers "yes,
 * and don't ask again": the file is merged, not replaced (every other key and rule stays as it
 * was), and written to a temporary file that is renamed over it, so a crash leaves the old file
 * or the new one, never half of one. A file that is not valid settings is left alone (the
 * SettingsError says why). Returns false when the rule was there already.
 */
export async function addLocalRule(
  projectRoot: string,
  behavior: RuleBehavior,
  rule: string,
): Promise<boolean> {
  const file = localSettingsFile(projectRoot);
  let json: Record<string, unknown> = {};
  let mode = 0o644;
  let text: string | undefined;
  try {
    text = await readFile(file, 'utf8');
    mode = (await stat(file)).mode & 0o777;
  } catch (e) {
    if (errnoCode(e) !== 'ENOENT') throw e;
  }
  if (text !== undefined) json = parseSettings(text, file);
  const permissions =
    typeof json.permissions === 'object' && json.permissions !== null
      ? (json.permissions as Record<string, unknown>)
      : {};
  const list = Array.isArray(permissions[behavior]) ? (permissions[behavior] as string[]) : [];
  if (list.includes(rule)) return false;
  const next = { ...json, permissions: { ...permissions, [behavior]: [...list, rule] } };
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = path.join(path.dirname(file), `.settings.local.json.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, `${JSON.stringify(next, null, 2)}\n`, { mode, flag: 'wx' });
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  return true;
}
