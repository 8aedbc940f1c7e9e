import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withGitGuard } from '../../src/lib/gitGuard.ts';
import { childEnv } from '../../src/lib/secrets.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

let root: string;
beforeAll(async () => {
  root = await tempDir('reloop-gitguard-');
});
afterAll(() => removeDir(root));

/** A folder made a bare repository by four plain files, its config running `touch PWN`. */
async function plantedBare(dir: string): Promise<void> {
  await mkdir(path.join(dir, 'objects', 'info'), { recursive: true });
  await mkdir(path.join(dir, 'refs', 'heads'), { recursive: true });
  await writeFile(path.join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  await writeFile(path.join(dir, 'objects', 'info', 'keep'), '');
  await writeFile(path.join(dir, 'refs', 'heads', 'keep'), '');
  await writeFile(
    path.join(dir, 'config'),
    '[core]\n\tfsmonitor = "touch PWN; false"\n\tsshCommand = "touch PWN; false"\n[remote "origin"]\n\turl = ssh://h/x\n',
  );
}

describe('withGitGuard', () => {
  it('appends its settings after the ones the environment has', () => {
    const env = withGitGuard({ GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'a.b', GIT_CONFIG_VALUE_0: 'c' });
    expect(env).toMatchObject({
      GIT_CONFIG_COUNT: '2',
      GIT_CONFIG_KEY_0: 'a.b',
      GIT_CONFIG_KEY_1: 'safe.bareRepository',
      GIT_CONFIG_VALUE_1: 'explicit',
    });
    // A count git cannot read makes git refuse every command: left as it is.
    expect(withGitGuard({ GIT_CONFIG_COUNT: 'x' })).toEqual({ GIT_CONFIG_COUNT: 'x' });
  });

  it('git run with a child environment refuses a planted bare repository (and runs nothing from it)', async () => {
    const dir = path.join(root, 'planted');
    await plantedBare(dir);
    const plain = spawnSync('git', ['fetch'], { cwd: dir, encoding: 'utf8' });
    // Without the guard git uses the folder as a repository and runs its core.sshCommand.
    expect(existsSync(path.join(dir, 'PWN')), plain.stderr).toBe(true);
    await removeDir(path.join(dir, 'PWN'));
    for (const args of [['fetch'], ['status'], ['log']]) {
      const r = spawnSync('git', args, { cwd: dir, encoding: 'utf8', env: childEnv() });
      expect(r.status, args.join(' ')).not.toBe(0);
      expect(r.stderr).toMatch(/safe\.bareRepository/);
    }
    expect(existsSync(path.join(dir, 'PWN'))).toBe(false);
  });

  it('leaves ordinary repositories alone', async () => {
    const dir = path.join(root, 'ordinary');
    await mkdir(dir, { recursive: true });
    expect(spawnSync('git', ['init', '-q'], { cwd: dir }).status).toBe(0);
    const r = spawnSync('git', ['status', '--short'], { cwd: dir, encoding: 'utf8', env: childEnv() });
    expect(r.status, r.stderr).toBe(0);
  });
});
