import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/tools/builtin/common.ts';
import { readTool } from '../../src/tools/builtin/read.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let root: string;
let cwd: string;
const read = readTool();

beforeAll(async () => {
  root = await tempDir('reloop-read-');
  cwd = path.join(root, 'p');
  await mkdir(cwd);
  await writeFile(path.join(cwd, 'three.txt'), 'one\ntwo\nthree\n');
  await writeFile(path.join(cwd, 'crlf.txt'), 'a\r\nb\r\n');
  await writeFile(path.join(cwd, 'empty.txt'), '');
  await writeFile(path.join(cwd, 'bin.dat'), Buffer.from([0x50, 0x4b, 0x00, 0x01, 0x02]));
  await writeFile(path.join(cwd, 'huge.txt'), 'line\n'.repeat(60_000));
  await writeFile(path.join(root, 'secret.txt'), 'secret');
  await symlink(path.join(root, 'secret.txt'), path.join(cwd, 'link.txt'));
});
afterAll(() => removeDir(root));

describe('Read', () => {
  it('numbers lines like cat -n and returns the file fact', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(read, { file_path: 'three.txt' }, ctx);
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe('     1\tone\n     2\ttwo\n     3\tthree');
    expect(out.filesRead).toEqual([
      { path: path.join(cwd, 'three.txt'), sha256: sha256('one\ntwo\nthree\n'), mtimeMs: expect.any(Number) },
    ]);
  });

  it('honours offset and limit and says how to continue', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(read, { file_path: 'three.txt', offset: 2, limit: 1 }, ctx);
    expect(textOf(out)).toBe('     2\ttwo\n[… 1 more lines; continue with offset=3 …]');
  });

  it('handles CRLF, empty files and offsets past the end', async () => {
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(read, { file_path: 'crlf.txt' }, ctx))).toBe('     1\ta\n     2\tb');
    expect(textOf(await callTool(read, { file_path: 'empty.txt' }, ctx))).toMatch(/is empty/);
    expect(textOf(await callTool(read, { file_path: 'three.txt', offset: 9 }, ctx))).toMatch(/past the end/);
  });

  it('refuses binary files', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(read, { file_path: 'bin.dat' }, ctx);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/binary/);
    expect(out.filesRead).toBeUndefined();
  });

  it('refuses a huge file read whole, but reads a range of it', async () => {
    const { ctx } = contextFor(cwd);
    const whole = await callTool(read, { file_path: 'huge.txt' }, ctx);
    expect(whole.isError).toBe(true);
    expect(textOf(whole)).toMatch(/too large.*offset and limit/s);
    const part = await callTool(read, { file_path: 'huge.txt', offset: 50_000, limit: 2 }, ctx);
    expect(part.isError).toBeFalsy();
    expect(textOf(part)).toMatch(/^ 50000\tline\n 50001\tline\n/);
  });

  it('reports missing files, directories and paths outside cwd as errors', async () => {
    const { ctx } = contextFor(cwd);
    const missing = await callTool(read, { file_path: 'nope.txt' }, ctx);
    expect([missing.isError, textOf(missing)]).toEqual([true, 'File does not exist: nope.txt']);
    expect(textOf(await callTool(read, { file_path: '.' }, ctx))).toMatch(/is a directory/);
    for (const p of ['../secret.txt', path.join(root, 'secret.txt'), 'link.txt']) {
      const out = await callTool(read, { file_path: p }, ctx);
      expect(out.isError).toBe(true);
      expect(textOf(out)).toMatch(/outside the working directory/);
    }
  });

  it('reads outside paths when built with allowOutsideCwd (the policy checked them)', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(readTool({ allowOutsideCwd: true }), { file_path: '../secret.txt' }, ctx);
    expect(textOf(out)).toBe('     1\tsecret');
  });

  it('rejects bad input through its schema', () => {
    expect(read.inputSchema.safeParse({ file_path: 'a', offset: 0 }).success).toBe(false);
    expect(read.inputSchema.safeParse({ path: 'a' }).success).toBe(false);
    expect(read.isReadOnly && read.isConcurrencySafe({ file_path: 'a' })).toBe(true);
  });
});
