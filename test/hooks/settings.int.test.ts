import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HookSettingsError, loadHookSettings } from '../../src/hooks/settings.ts';
import { bashTool } from '../../src/tools/builtin/bash.ts';
import { editTool } from '../../src/tools/builtin/edit.ts';
import { readTool } from '../../src/tools/builtin/read.ts';
import type { AnyTool } from '../../src/tools/types.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let cwd: string;
beforeAll(async () => {
  cwd = await tempDir('reloop-settings-');
});
afterAll(() => removeDir(cwd));

async function settingsFile(json: unknown, name = 'settings.json'): Promise<string> {
  const file = path.join(cwd, name);
  await writeFile(file, typeof json === 'string' ? json : JSON.stringify(json));
  return file;
}
const req = (tool: AnyTool, input: unknown = {}) => ({ tool, input, toolUseId: 't', cwd });

describe('loadHookSettings', () => {
  it('runs only the PreToolUse hooks whose matcher names the tool; the strictest answer wins', async () => {
    const file = await settingsFile({
      hooks: {
        PreToolUse: [
          {
            matcher: 'Bash|Edit',
            hooks: [{ type: 'command', command: 'echo ran >> matched.log', timeout: 5 }],
          },
          { matcher: 'Bash', hooks: [{ type: 'command', command: 'echo "no shell today" >&2; exit 2' }] },
          { matcher: 'Bash', hooks: [{ type: 'command', command: `echo '{"decision":"approve"}'` }] },
        ],
      },
    });
    const { toolHooks } = await loadHookSettings(file, { sessionId: 's' });
    const preToolUse = toolHooks.preToolUse!;
    expect(await preToolUse(req(readTool()))).toEqual({ decision: 'continue' });
    expect(await preToolUse(req(editTool()))).toEqual({ decision: 'continue' });
    expect(await preToolUse(req(bashTool(), { command: 'ls' }))).toEqual({
      decision: 'deny',
      reason: 'no shell today',
    });
    // Matchers are anchored: "Edit" does not match "MultiEdit".
    expect(await preToolUse(req({ ...editTool(), name: 'MultiEdit' }))).toEqual({ decision: 'continue' });
    expect((await readFile(path.join(cwd, 'matched.log'), 'utf8')).trim().split('\n')).toEqual([
      'ran',
      'ran',
    ]);
  });

  it('builds Stop hooks that honour the per-hook timeout in seconds', async () => {
    const file = await settingsFile({
      hooks: { Stop: [{ hooks: [{ type: 'command', command: 'sleep 30', timeout: 0.3 }] }] },
    });
    const { stopHooks } = await loadHookSettings(file, { killGraceMs: 100 });
    const input = {
      session_id: 's',
      hook_event_name: 'Stop' as const,
      stop_hook_active: false,
      last_assistant_message: '',
      cwd,
    };
    const r = await stopHooks[0]!.run(input, new AbortController().signal);
    expect(r).toMatchObject({ decision: 'error', reason: expect.stringMatching(/within 0.3 s/) });
  });

  it('names the file when it is missing or not JSON', async () => {
    await expect(loadHookSettings(path.join(cwd, 'nope.json'))).rejects.toThrow(HookSettingsError);
    await expect(loadHookSettings(path.join(cwd, 'nope.json'))).rejects.toThrow(
      /nope\.json: \(file\): cannot read/,
    );
    const bad = await settingsFile('{"hooks": ', 'bad.json');
    await expect(loadHookSettings(bad)).rejects.toThrow(/bad\.json: \(file\): not valid JSON/);
  });
});
