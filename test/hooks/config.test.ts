import { describe, expect, it } from 'vitest';
import {
  describeHooks,
  HookSettingsError,
  hooksFromLayers,
  mergeHooks,
  type SettingsLayer,
} from '../../src/hooks/config.ts';
import { compileMatcher } from '../../src/hooks/matcher.ts';
import { commandLineHooks } from '../../src/hooks/settings.ts';

const layer = (
  json: unknown,
  source = 'projectSettings',
  file: string | null = '/p/.claude/settings.json',
): SettingsLayer => ({
  source,
  file,
  root: '/p',
  json,
});

function errorOf(json: unknown): HookSettingsError {
  try {
    hooksFromLayers([layer(json)]);
  } catch (e) {
    if (e instanceof HookSettingsError) return e;
    throw e;
  }
  throw new Error('expected a HookSettingsError');
}

describe('hooksFromLayers', () => {
  it('reads every layer in order, each group tagged with its source and file', () => {
    const { hooks, warnings } = hooksFromLayers([
      layer(
        { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'user-stop' }] }] } },
        'userSettings',
        '/home/u/.claude/settings.json',
      ),
      layer({
        permissions: { allow: ['Bash'] },
        hooks: {
          PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'guard', timeout: 5 }] }],
          Stop: [
            {
              hooks: [
                { type: 'command', command: 'a' },
                { type: 'command', command: 'b' },
              ],
            },
          ],
        },
      }),
      layer(
        { hooks: { SessionStart: [{ matcher: 'startup', hooks: [{ type: 'command', command: 'ctx' }] }] } },
        'flagSettings',
        null,
      ),
    ]);
    expect(warnings).toEqual([]);
    expect(describeHooks(hooks)).toEqual([
      { source: 'userSettings', event: 'Stop', matcher: null, command: 'user-stop', timeout: null },
      { source: 'projectSettings', event: 'Stop', matcher: null, command: 'a', timeout: null },
      { source: 'projectSettings', event: 'Stop', matcher: null, command: 'b', timeout: null },
      { source: 'projectSettings', event: 'PreToolUse', matcher: 'Bash', command: 'guard', timeout: 5 },
      { source: 'flagSettings', event: 'SessionStart', matcher: 'startup', command: 'ctx', timeout: null },
    ]);
    expect(hooks.Stop![0]).toMatchObject({ source: 'userSettings', file: '/home/u/.claude/settings.json' });
    expect(hooksFromLayers([layer({})])).toEqual({ hooks: {}, warnings: [] });
  });

  it('names the file and the bad field', () => {
    const missing = errorOf({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command' }] }] } });
    expect(missing.code).toBe('INVALID_HOOK_SETTINGS');
    expect(missing.message).toMatch(
      /^\/p\/.claude\/settings.json: hooks.PreToolUse\[0\].hooks\[0\].command: /,
    );
    expect(
      errorOf({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: -1 }] }] } }).field,
    ).toBe('hooks.Stop[0].hooks[0].timeout');
    expect(errorOf({ hooks: { Stop: {} } }).field).toBe('hooks.Stop');
    expect(errorOf([]).field).toBe('(root)');
    expect(() => hooksFromLayers([layer({ hooks: [] }, 'flagSettings', null)])).toThrow(
      /flagSettings \(inline JSON\): hooks/,
    );
  });

  it('refuses a matcher that is not a valid regex (a guard hook silently dropped would fail open)', () => {
    const e = errorOf({
      hooks: { PreToolUse: [{ matcher: 'Bash(', hooks: [{ type: 'command', command: 'x' }] }] },
    });
    expect(e.field).toBe('hooks.PreToolUse[0].matcher');
    expect(e.message).toMatch(/invalid matcher regex/);
  });

  it('warns, naming the file and the entry, about what it reads but does not run', () => {
    const { hooks, warnings } = hooksFromLayers([
      layer({
        hooks: {
          Stop: [
            {
              hooks: [
                { type: 'prompt', prompt: 'check' },
                { type: 'command', command: 'ok' },
              ],
            },
          ],
          PostToolUse: [
            { matcher: 'Edit', hooks: [{ type: 'command', command: 'fmt', async: true, if: 'Edit(*.ts)' }] },
          ],
          TeammateIdle: [{ hooks: [{ type: 'command', command: 'x' }] }],
          Whatever: [{ hooks: [] }],
        },
      }),
    ]);
    expect(describeHooks(hooks).map((h) => h.command)).toEqual(['ok', 'fmt']);
    expect(warnings).toEqual([
      '/p/.claude/settings.json: hooks.Stop[0].hooks[0] has type "prompt": only command hooks run here; this one is ignored',
      '/p/.claude/settings.json: hooks.PostToolUse[0].hooks[0]: async hooks are not supported: it runs synchronously, and its decision counts',
      '/p/.claude/settings.json: hooks.PostToolUse[0].hooks[0]: the `if` filter is not supported: the hook runs for every occurrence its matcher matches',
      '/p/.claude/settings.json: hooks.TeammateIdle: reloop never fires TeammateIdle (no counterpart in this runtime); its hooks are ignored',
      '/p/.claude/settings.json: hooks.Whatever is not a hook event; ignored',
    ]);
  });

  it('disableAllHooks and allowManagedHooksOnly, with managed settings on top', () => {
    const project = layer({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'p' }] }] } });
    const managed = (extra: object) =>
      layer(
        { hooks: { Stop: [{ hooks: [{ type: 'command', command: 'm' }] }] }, ...extra },
        'policySettings',
        '/etc/claude-code/managed-settings.json',
      );
    const commands = (layers: SettingsLayer[]) =>
      describeHooks(hooksFromLayers(layers).hooks).map((h) => h.command);
    expect(commands([project, managed({})])).toEqual(['p', 'm']);
    expect(commands([layer({ disableAllHooks: true }, 'localSettings'), project, managed({})])).toEqual([
      'm',
    ]);
    expect(commands([project, managed({ allowManagedHooksOnly: true })])).toEqual(['m']);
    expect(commands([project, managed({ disableAllHooks: true })])).toEqual([]);
  });
});

describe('matchers (Claude Code: exact names and lists, else an unanchored regex)', () => {
  it.each([
    [undefined, 'Anything', true],
    ['', 'Anything', true],
    ['*', 'Anything', true],
    ['Bash', 'Bash', true],
    ['Bash', 'BashOutput', false],
    ['Edit|Write', 'Write', true],
    ['Edit, Write', 'Write', true],
    ['Edit|Write', 'MultiEdit', false],
    ['mcp__memory', 'mcp__memory__create_entities', false],
    ['mcp__memory__.*', 'mcp__memory__create_entities', true],
    ['^Notebook', 'NotebookEdit', true],
    ['Edit.*', 'NotebookEdit', true],
    ['my-agent', 'my-agent', true],
  ])('%j matches %s: %s', (matcher, name, expected) => {
    expect(compileMatcher(matcher).test(name)).toBe(expected);
  });
});

describe('merging', () => {
  it('keeps every event’s groups in order; --stop-hook commands are cliArg Stop hooks', () => {
    const merged = mergeHooks(
      { Stop: [{ hooks: [{ type: 'command', command: 'a' }], source: 'projectSettings' }] },
      commandLineHooks('Stop', ['b', 'c']),
      undefined,
    );
    expect(describeHooks(merged).map((h) => [h.source, h.command])).toEqual([
      ['projectSettings', 'a'],
      ['cliArg', 'b'],
      ['cliArg', 'c'],
    ]);
    expect(commandLineHooks('Stop', [])).toEqual({});
  });
});
