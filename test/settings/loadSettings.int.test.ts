/**
 * Settings as Claude Code resolves them: which files, in which order, with which roots; what a
 * broken file does (an error naming it and the field, never a silent skip); what the layers say
 * about permissions. Every file is under a scratch home and project: the real ~ is never read.
 */
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  addLocalRule,
  highestSetting,
  loadSettings,
  parseSettingSources,
  permissionSettings,
  SettingSourcesError,
  SettingsError,
  userClaudeDir,
} from '../../src/settings/index.ts';

let tmp: string;
let home: string;
let project: string;
let userDir: string;

beforeEach(async () => {
  tmp = await mkdtemp(path.join(tmpdir(), 'reloop-settings-'));
  home = path.join(tmp, 'home');
  project = path.join(tmp, 'project');
  userDir = path.join(home, '.claude');
  await mkdir(userDir, { recursive: true });
  await mkdir(path.join(project, '.claude'), { recursive: true });
});
afterEach(async () => {
  await rm(tmp, { recursive: true, force: true });
});

const write = async (file: string, json: unknown) => {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, typeof json === 'string' ? json : JSON.stringify(json));
};
const userFile = () => path.join(userDir, 'settings.json');
const projectFile = () => path.join(project, '.claude', 'settings.json');
const localFile = () => path.join(project, '.claude', 'settings.local.json');
const all = ['user', 'project', 'local'] as const;

async function load(extra: Partial<Parameters<typeof loadSettings>[0]> = {}) {
  return loadSettings({ cwd: project, userDir, managedFile: null, sources: all, ...extra });
}

describe('loadSettings', () => {
  beforeEach(async () => {
    await write(userFile(), { permissions: { allow: ['Read'] }, model: 'claude-haiku-4-5' });
    await write(projectFile(), { $schema: 'x', permissions: { deny: ['Read(./secrets/**)'] } });
    await write(localFile(), { permissions: { allow: ['Bash(npm test:*)'], defaultMode: 'acceptEdits' } });
  });

  it('reads user < project < local, each with the root its /path rules are anchored at', async () => {
    const { layers, warnings } = await load();
    expect(layers.map((l) => [l.source, l.file, l.root])).toEqual([
      ['userSettings', userFile(), home],
      ['projectSettings', projectFile(), project],
      ['localSettings', localFile(), project],
    ]);
    expect(warnings).toEqual([]);
  });

  it('reads no file unless asked (the library default), and only the sources asked for', async () => {
    expect((await loadSettings({ cwd: project, userDir, managedFile: null })).layers).toEqual([]);
    const { layers } = await load({ sources: ['project'] });
    expect(layers.map((l) => l.source)).toEqual(['projectSettings']);
  });

  it('puts --settings (a file or JSON text), the CLI flags and the managed file on top, in that order', async () => {
    const managed = path.join(tmp, 'etc', 'managed-settings.json');
    await write(managed, { permissions: { deny: ['Bash(curl:*)'] } });
    await write(path.join(tmp, 'etc', 'managed-settings.d', 'b.json'), {
      permissions: { deny: ['WebFetch'] },
    });
    await write(path.join(tmp, 'etc', 'managed-settings.d', 'a.json'), { permissions: { ask: ['Bash'] } });
    const flagFile = path.join(tmp, 'ci', 'settings.json');
    await write(flagFile, { permissions: { allow: ['Glob'] } });
    const cliArg = { permissions: { allow: ['Grep'] } };
    const fromFile = await load({ flagSettings: flagFile, cliArg, managedFile: managed });
    expect(fromFile.layers.map((l) => [l.source, l.file])).toEqual([
      ['userSettings', userFile()],
      ['projectSettings', projectFile()],
      ['localSettings', localFile()],
      ['flagSettings', flagFile],
      ['cliArg', null],
      ['policySettings', managed],
      ['policySettings', path.join(tmp, 'etc', 'managed-settings.d', 'a.json')],
      ['policySettings', path.join(tmp, 'etc', 'managed-settings.d', 'b.json')],
    ]);
    expect(fromFile.layers[3]?.root).toBe(path.join(tmp, 'ci'));
    expect(fromFile.layers[5]?.root).toBe(project);
    const fromText = await load({ flagSettings: ' {"permissions":{"ask":["Edit"]}}' });
    expect(fromText.layers.at(-1)).toEqual({
      source: 'flagSettings',
      file: null,
      root: project,
      json: { permissions: { ask: ['Edit'] } },
    });
  });

  it('adds up the rules of every source; a scalar is the highest source that sets it', async () => {
    const managed = path.join(tmp, 'managed.json');
    await write(managed, {
      permissions: { disableBypassPermissionsMode: 'disable', additionalDirectories: ['~/lib', 'rel'] },
    });
    const { layers } = await load({ managedFile: managed, cliArg: { permissions: { defaultMode: 'plan' } } });
    const p = permissionSettings(layers, home);
    expect(p.rules.map((r) => `${r.source} ${r.behavior} ${r.rule}`)).toEqual([
      'userSettings allow Read',
      'projectSettings deny Read(./secrets/**)',
      'localSettings allow Bash(npm test:*)',
    ]);
    expect(p.defaultMode).toEqual({ mode: 'plan', source: 'cliArg', file: null });
    expect(p.bypassDisabledBy).toEqual({ source: 'policySettings', file: managed });
    expect(p.additionalDirectories).toEqual([
      { dir: path.join(home, 'lib'), source: 'policySettings' },
      { dir: path.join(project, 'rel'), source: 'policySettings' },
    ]);
    expect(highestSetting(layers, 'model')).toMatchObject({
      value: 'claude-haiku-4-5',
      layer: { source: 'userSettings' },
    });
    expect(highestSetting(layers, 'nothing')).toBeUndefined();
  });

  it('accepts keys it does not know; warns once per key that would change what Claude Code does', async () => {
    await write(projectFile(), {
      $schema: 'https://json.schemastore.org/claude-code-settings.json',
      statusLine: { type: 'command', command: 'x' },
      enabledPlugins: { a: true },
      env: { FOO: '1' },
      sandbox: { enabled: true },
      permissions: { allow: [], somethingNew: 1 },
    });
    const { layers, warnings } = await load({ sources: ['project'] });
    expect(layers).toHaveLength(1);
    expect(warnings).toHaveLength(2);
    expect(warnings[0]).toMatch(new RegExp(`^${escapeRegExp(projectFile())}: "env" is not supported`));
    expect(warnings[1]).toContain('"sandbox" is not supported');
  });

  it('a file that is not JSON is an error naming the file, the line and the column', async () => {
    await write(projectFile(), '{\n  "permissions": {\n    "deny": ["Read(.env)"],\n  }\n}');
    const e = await load().catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SettingsError);
    expect((e as SettingsError).code).toBe('SETTINGS_INVALID');
    expect((e as Error).message).toBe(
      `settings ${projectFile()}: not valid JSON: Expected double-quoted property name at line 4, column 3`,
    );
  });

  it.each([
    [{ permissions: { allow: ['Read', 7] } }, 'permissions.allow[1]'],
    [{ permissions: { deny: 'Read' } }, 'permissions.deny'],
    [{ permissions: { defaultMode: 'yolo' } }, 'permissions.defaultMode'],
    [{ permissions: { disableBypassPermissionsMode: 'enable' } }, 'permissions.disableBypassPermissionsMode'],
    [{ permissions: { additionalDirectories: '../lib' } }, 'permissions.additionalDirectories'],
    [{ enableAllProjectMcpServers: 'yes' }, 'enableAllProjectMcpServers'],
    [{ hooks: [] }, 'hooks'],
  ])('a known key of the wrong type is an error naming the field: %j', async (json, field) => {
    await write(localFile(), json);
    const e = (await load().catch((x: unknown) => x)) as SettingsError;
    expect(e).toBeInstanceOf(SettingsError);
    expect(e.file).toBe(localFile());
    expect(e.field).toBe(field);
    expect(e.message.startsWith(`settings ${localFile()}: ${field}: `)).toBe(true);
  });

  it('a file that holds no object, or is a directory, is an error; a missing one is no layer', async () => {
    await write(localFile(), '[1, 2]');
    await expect(load()).rejects.toThrow(`settings ${localFile()}: the file must hold a JSON object`);
    await rm(localFile());
    await mkdir(localFile());
    await expect(load()).rejects.toThrow(`settings ${localFile()}: not a regular file`);
    await rm(localFile(), { recursive: true });
    await rm(userFile());
    expect((await load()).layers.map((l) => l.source)).toEqual(['projectSettings']);
  });

  it('a --settings file that is missing is an error; so is JSON text that does not parse', async () => {
    const missing = path.join(tmp, 'nope.json');
    await expect(load({ flagSettings: missing })).rejects.toThrow(`settings ${missing}: cannot read`);
    await expect(load({ flagSettings: '{"permissions": ' })).rejects.toThrow(
      'settings --settings: not valid JSON: Unexpected end of JSON input',
    );
  });
});

describe('parseSettingSources', () => {
  it('takes a comma list of user, project, local in any order; "" is none', () => {
    expect(parseSettingSources('local,user')).toEqual(['user', 'local']);
    expect(parseSettingSources(' project ')).toEqual(['project']);
    expect(parseSettingSources('')).toEqual([]);
    expect(() => parseSettingSources('user,global')).toThrow(SettingSourcesError);
  });
});

describe('userClaudeDir', () => {
  it('RELOOP_HOME first (tests), then CLAUDE_CONFIG_DIR, then ~/.claude', () => {
    expect(userClaudeDir({ RELOOP_HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toBe('/h/.claude');
    expect(userClaudeDir({ CLAUDE_CONFIG_DIR: '/c' })).toBe('/c');
  });
});

describe('addLocalRule', () => {
  it('merges the rule into settings.local.json, keeping every other key, once', async () => {
    await write(localFile(), { env: { A: '1' }, permissions: { allow: ['Read'], deny: ['Bash(rm:*)'] } });
    expect(await addLocalRule(project, 'allow', 'Bash(npm test:*)')).toBe(true);
    expect(await addLocalRule(project, 'allow', 'Bash(npm test:*)')).toBe(false);
    expect(JSON.parse(await readFile(localFile(), 'utf8'))).toEqual({
      env: { A: '1' },
      permissions: { allow: ['Read', 'Bash(npm test:*)'], deny: ['Bash(rm:*)'] },
    });
  });

  it('creates .claude/settings.local.json when there is none', async () => {
    await rm(path.join(project, '.claude'), { recursive: true });
    await addLocalRule(project, 'allow', 'Edit(/src/a.ts)');
    expect(JSON.parse(await readFile(localFile(), 'utf8'))).toEqual({
      permissions: { allow: ['Edit(/src/a.ts)'] },
    });
    expect((await stat(localFile())).isFile()).toBe(true);
  });

  it('leaves a broken file as it is', async () => {
    await write(localFile(), '{ broken');
    await expect(addLocalRule(project, 'allow', 'Read')).rejects.toBeInstanceOf(SettingsError);
    expect(await readFile(localFile(), 'utf8')).toBe('{ broken');
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
