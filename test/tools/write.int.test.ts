import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editTool } from '../../src/tools/builtin/edit.ts';
import { readTool } from '../../src/tools/builtin/read.ts';
import { writeTool } from '../../src/tools/builtin/write.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let root: string;
let cwd: string;
const write = writeTool();

beforeEach(async () => {
  root = await tempDir('reloop-write-');
  cwd = path.join(root, 'p');
  await mkdir(cwd);
});
afterEach(() => removeDir(root));

describe('Write', () => {
  it('creates a file and its missing directories, and returns its fact so Edit can follow', async () => {
    const { ctx, session } = contextFor(cwd);
    const out = await callTool(write, { file_path: 'a/b/c.txt', content: 'x\ny\n' }, ctx);
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe('Created a/b/c.txt (2 lines).');
    expect(await readFile(path.join(cwd, 'a/b/c.txt'), 'utf8')).toBe('x\ny\n');
    expect(session.fileRead(path.join(cwd, 'a/b/c.txt'))).toBeDefined();
    const edit = await callTool(
      editTool(),
      { file_path: 'a/b/c.txt', old_string: 'y', new_string: 'z' },
      ctx,
    );
    expect(edit.isError).toBeFalsy();
  });

  it('refuses to overwrite an existing file that was not read', async () => {
    await writeFile(path.join(cwd, 'old.txt'), 'precious');
    const { ctx } = contextFor(cwd);
    const out = await callTool(write, { file_path: 'old.txt', content: 'new' }, ctx);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/has not been read/);
    expect(await readFile(path.join(cwd, 'old.txt'), 'utf8')).toBe('precious');
  });

  it('overwrites a file that was read, but not once it changed since', async () => {
    const file = path.join(cwd, 'f.txt');
    await writeFile(file, 'v1');
    const { ctx } = contextFor(cwd);
    await callTool(readTool(), { file_path: 'f.txt' }, ctx);
    await writeFile(file, 'v2 from the user');
    const stale = await callTool(write, { file_path: 'f.txt', content: 'mine' }, ctx);
    expect([stale.isError, textOf(stale)]).toEqual([
      true,
      expect.stringMatching(/changed since it was last read/),
    ]);
    await callTool(readTool(), { file_path: 'f.txt' }, ctx);
    const ok = await callTool(write, { file_path: 'f.txt', content: 'mine' }, ctx);
    expect(textOf(ok)).toBe('Overwrote f.txt (1 line).');
    expect(await readFile(file, 'utf8')).toBe('mine');
  });

  it('refuses paths outside cwd, through .., absolute or a symlink', async () => {
    await mkdir(path.join(root, 'out'));
    await symlink(path.join(root, 'out'), path.join(cwd, 'link'));
    const { ctx } = contextFor(cwd);
    for (const p of ['../x.txt', path.join(root, 'y.txt'), 'link/z.txt']) {
      const out = await callTool(write, { file_path: p, content: 'x' }, ctx);
      expect(out.isError).toBe(true);
      expect(textOf(out)).toMatch(/outside the working directory/);
    }
  });

  it('refuses to write over a directory', async () => {
    await mkdir(path.join(cwd, 'd'));
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(write, { file_path: 'd', content: 'x' }, ctx))).toMatch(/is a directory/);
  });

  it('is neither read-only nor concurrency-safe', () => {
    expect(write.isReadOnly).toBe(false);
    expect(write.isConcurrencySafe({ file_path: 'a', content: '' })).toBe(false);
  });
});
