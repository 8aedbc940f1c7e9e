import { mkdir, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { globTool } from '../../src/tools/builtin/glob.ts';
import { grepTool } from '../../src/tools/builtin/grep.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let root: string;
let cwd: string;
const glob = globTool();
const grep = grepTool();

async function put(rel: string, content: string | Buffer, ageSeconds = 0) {
  const abs = path.join(cwd, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, content);
  const t = new Date(Date.now() - ageSeconds * 1000);
  await utimes(abs, t, t);
}

beforeAll(async () => {
  root = await tempDir('reloop-globgrep-');
  cwd = path.join(root, 'p');
  await put('src/old.ts', 'export const OLD = 1;\n// TODO remove\n', 300);
  await put('src/new.ts', 'export const NEW = 2;\nexport function todo() {}\n', 10);
  await put('src/deep/x.tsx', 'const Todo = () => null; // TODO\n', 100);
  await put('README.md', 'TODO: docs\n', 200);
  await put('node_modules/dep/index.ts', 'TODO in a dependency\n');
  await put('.git/HEAD', 'TODO ref\n');
  await put('image.png', Buffer.from([0x89, 0x50, 0x00, 0x54, 0x4f, 0x44, 0x4f]));
  await mkdir(path.join(root, 'outside'));
  await writeFile(path.join(root, 'outside', 'leak.ts'), 'TODO outside\n');
  await symlink(path.join(root, 'outside'), path.join(cwd, 'src', 'linked'));
  await symlink(path.join(root, 'outside', 'leak.ts'), path.join(cwd, 'src', 'leak.ts'));
});
afterAll(() => removeDir(root));

describe('Glob', () => {
  it('lists matches relative to cwd, newest first, skipping node_modules, .git and symlinks', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(glob, { pattern: '**/*.ts' }, ctx);
    expect(textOf(out)).toBe('src/new.ts\nsrc/old.ts');
  });

  it('searches under path, still answering relative to cwd', async () => {
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(glob, { pattern: '**/*.{ts,tsx}', path: 'src/deep' }, ctx))).toBe(
      'src/deep/x.tsx',
    );
  });

  it('finds node_modules only when the pattern names it', async () => {
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(glob, { pattern: 'node_modules/**/*.ts' }, ctx))).toBe(
      'node_modules/dep/index.ts',
    );
  });

  it('says when nothing matches and caps long lists', async () => {
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(glob, { pattern: '*.java' }, ctx))).toBe('No files match *.java.');
    const many = await tempDir('reloop-glob-many-');
    try {
      await Promise.all(Array.from({ length: 120 }, (_, i) => writeFile(path.join(many, `f${i}.txt`), '')));
      const out = textOf(await callTool(glob, { pattern: '*.txt' }, contextFor(many).ctx));
      expect(out.split('\n')).toHaveLength(101);
      expect(out).toMatch(/\[… 20 more files not shown/);
    } finally {
      await removeDir(many);
    }
  });

  it('refuses escaping patterns and paths outside cwd', async () => {
    const { ctx } = contextFor(cwd);
    for (const input of [{ pattern: '../**/*.ts' }, { pattern: '/etc/*' }, { pattern: '*', path: '..' }]) {
      const out = await callTool(glob, input, ctx);
      expect(out.isError).toBe(true);
    }
    expect(textOf(await callTool(glob, { pattern: '*', path: 'src/linked' }, ctx))).toMatch(/outside/);
  });
});

describe('Grep', () => {
  it('lists files with matches by default, newest first, skipping binaries, deps and symlinks', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(grep, { pattern: 'TODO' }, ctx);
    expect(textOf(out)).toBe('Found 3 files\nsrc/deep/x.tsx\nREADME.md\nsrc/old.ts');
  });

  it('shows matching lines with line numbers in content mode, case-insensitively with -i', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(
      grep,
      { pattern: 'todo', '-i': true, output_mode: 'content', path: 'src' },
      ctx,
    );
    expect(textOf(out)).toBe(
      [
        'src/deep/x.tsx:1:const Todo = () => null; // TODO',
        'src/new.ts:2:export function todo() {}',
        'src/old.ts:2:// TODO remove',
      ].join('\n'),
    );
    const plain = await callTool(grep, { pattern: 'OLD', output_mode: 'content', '-n': false }, ctx);
    expect(textOf(plain)).toBe('src/old.ts:export const OLD = 1;');
  });

  it('counts matches per file and filters with a glob at any depth', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(grep, { pattern: 'export', output_mode: 'count', glob: '*.ts' }, ctx);
    expect(textOf(out)).toBe('src/new.ts:2\nsrc/old.ts:1\n\nFound 3 matching lines in 2 files.');
  });

  it('searches a single file and honours head_limit', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(
      grep,
      { pattern: 'export', path: 'src/new.ts', output_mode: 'content', head_limit: 1 },
      ctx,
    );
    expect(textOf(out)).toMatch(/^src\/new.ts:1:export const NEW = 2;\n\[… 1 more lines not shown/);
  });

  it('reports no matches, invalid regexes, missing paths and paths outside cwd', async () => {
    const { ctx } = contextFor(cwd);
    expect(textOf(await callTool(grep, { pattern: 'zzz_nothing' }, ctx))).toBe(
      'No matches for "zzz_nothing".',
    );
    const bad = await callTool(grep, { pattern: '(' }, ctx);
    expect([bad.isError, textOf(bad)]).toEqual([true, expect.stringMatching(/Invalid regular expression/)]);
    expect(textOf(await callTool(grep, { pattern: 'x', path: 'missing' }, ctx))).toBe(
      'Path does not exist: missing',
    );
    const out = await callTool(grep, { pattern: 'TODO', path: '../outside' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([
      true,
      expect.stringMatching(/outside the working directory/),
    ]);
  });

  it('is read-only and concurrency-safe', () => {
    expect(grep.isReadOnly && grep.isConcurrencySafe({ pattern: 'x' })).toBe(true);
    expect(glob.isReadOnly && glob.isConcurrencySafe({ pattern: 'x' })).toBe(true);
  });
});
