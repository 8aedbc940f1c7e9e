import { describe, expect, it } from 'vitest';
import { HookSettingsError, hookSettingsFrom } from '../../src/hooks/settings.ts';

function errorOf(json: unknown): HookSettingsError {
  try {
    hookSettingsFrom(json, '/p/settings.json');
  } catch (e) {
    if (e instanceof HookSettingsError) return e;
    throw e;
  }
  throw new Error('expected a HookSettingsError');
}

describe('hookSettingsFrom', () => {
  it('builds one Stop hook per command and a preToolUse only when configured', () => {
    const s = hookSettingsFrom(
      {
        permissions: { allow: ['Bash'] },
        hooks: {
          Stop: [
            {
              hooks: [
                { type: 'command', command: 'a' },
                { type: 'command', command: 'b' },
              ],
            },
          ],
        },
      },
      'f.json',
    );
    expect(s.stopHooks.map((h) => h.name)).toEqual(['a', 'b']);
    expect(s.toolHooks.preToolUse).toBeUndefined();
    expect(s.warnings).toEqual([]);
    expect(hookSettingsFrom({}, 'f.json')).toMatchObject({ stopHooks: [], toolHooks: {}, warnings: [] });
  });

  it('names the file and the bad field', () => {
    const missing = errorOf({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' }] }] } });
    expect(missing.code).toBe('INVALID_HOOK_SETTINGS');
    expect(missing.message).toMatch(/^\/p\/settings.json: hooks.PreToolUse\[0\].hooks\[0\].command: /);
    expect(
      errorOf({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: -1 }] }] } }).field,
    ).toBe('hooks.Stop[0].hooks[0].timeout');
    expect(errorOf({ hooks: { Stop: {} } }).field).toBe('hooks.Stop');
    expect(errorOf([]).field).toBe('(root)');
  });

  it('rejects a matcher that is not a valid regex', () => {
    const e = errorOf({
      hooks: { PreToolUse: [{ matcher: 'Bash(', hooks: [{ type: 'command', command: 'x' }] }] },
    });
    expect(e.field).toBe('hooks.PreToolUse[0].matcher');
    expect(e.message).toMatch(/invalid matcher regex/);
  });

  it('warns about events and hook types it does not support, instead of failing', () => {
    const s = hookSettingsFrom(
      {
        hooks: {
          PostToolUse: [{ matcher: 'Edit', hooks: [{ type: 'command', command: 'fmt' }] }],
          Stop: [{ hooks: [{ type: 'prompt', prompt: 'check' }] }],
        },
      },
      'f.json',
    );
    expect(s.stopHooks).toEqual([]);
    expect(s.warnings).toEqual([
      'f.json: hooks.PostToolUse is not supported and was ignored',
      'f.json: hooks.Stop[0].hooks[0] has type "prompt", not supported',
    ]);
  });
});
