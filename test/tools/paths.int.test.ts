import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveInCwd } from '../../src/tools/paths.ts';
import { removeDir, tempDir } from './toolHarness.ts';

let root: string;
let cwd: string;
let outside: string;

beforeAll(async () => {
  root = await tempDir('reloop-paths-');
  cwd = path.join(root, 'project');
  outside = path.join(root, 'outside');
  await mkdir(path.join(cwd, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(cwd, 'src', 'a.ts'), 'a');
  await writeFile(path.join(outside, 'secret.txt'), 's');
  await symlink(outside, path.join(cwd, 'out-link'));
  await symlink(path.join(outside, 'not-yet'), path.join(cwd, 'dangling'));
  await symlink(path.join(cwd, 'src'), path.join(cwd, 'src-link'));
});
afterAll(() => removeDir(root));

describe('resolveInCwd', () => {
  it('resolves relative paths against cwd and reports them inside', async () => {
    const r = await resolveInCwd(cwd, 'src/a.ts');
    expect(r).toMatchObject({ absolute: path.join(cwd, 'src/a.ts'), relative: 'src/a.ts', inside: true });
  });

  it('treats cwd itself as inside, relative "."', async () => {
    expect(await resolveInCwd(cwd, '.')).toMatchObject({ relative: '.', inside: true });
  });

  it('accepts new files in new directories inside cwd', async () => {
    const r = await resolveInCwd(cwd, 'new/dir/file.ts');
    expect(r).toMatchObject({ relative: 'new/dir/file.ts', inside: true });
  });

  it('reports ../ escapes as outside', async () => {
    const r = await resolveInCwd(cwd, '../outside/secret.txt');
    expect(r.inside).toBe(false);
    expect(r.relative).toBe('../outside/secret.txt');
  });

  it('reports a sibling directory sharing the name prefix as outside', async () => {
    await mkdir(`${cwd}-other`, { recursive: true });
    expect((await resolveInCwd(cwd, `${cwd}-other/x`)).inside).toBe(false);
  });

  it('reports absolute paths outside cwd as outside and inside ones as inside', async () => {
    expect((await resolveInCwd(cwd, '/etc/passwd')).inside).toBe(false);
    expect((await resolveInCwd(cwd, path.join(cwd, 'src/a.ts'))).inside).toBe(true);
  });

  it('reports a symlink inside cwd pointing outside as outside, for existing and new files', async () => {
    const existing = await resolveInCwd(cwd, 'out-link/secret.txt');
    expect(existing.inside).toBe(false);
    expect(existing.real).toBe(path.join(outside, 'secret.txt'));
    expect((await resolveInCwd(cwd, 'out-link/new-file.txt')).inside).toBe(false);
  });

  it('follows a dangling symlink: writing through it would create a file outside', async () => {
    const r = await resolveInCwd(cwd, 'dangling');
    expect(r.inside).toBe(false);
    expect(r.real).toBe(path.join(outside, 'not-yet'));
  });

  it('keeps a symlink pointing inside cwd inside, with the real relative path', async () => {
    const r = await resolveInCwd(cwd, 'src-link/a.ts');
    expect(r).toMatchObject({ inside: true, relative: 'src/a.ts' });
  });
});
