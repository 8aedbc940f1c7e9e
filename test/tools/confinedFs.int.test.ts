import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confinedGlob } from '../../src/tools/builtin/glob.ts';
import {
  FileTooLargeError,
  type FsRoot,
  NotRegularFileError,
  OutsideRootError,
  openFileForUpdate,
  readFileConfined,
  rootFor,
} from '../../src/tools/confinedFs.ts';
import { checkGlobPattern, expandBraces } from '../../src/tools/globPatterns.ts';
import { removeDir, tempDir } from './toolHarness.ts';

let base: string;
let cwd: string;
let outside: string;
let root: FsRoot;

beforeAll(async () => {
  base = await tempDir('reloop-confined-');
  cwd = path.join(base, 'proj');
  outside = path.join(base, 'outside');
  await mkdir(path.join(cwd, 'src'), { recursive: true });
  await mkdir(outside);
  await writeFile(path.join(cwd, 'src', 'a.txt'), 'inside\n');
  await writeFile(path.join(outside, 'secret.txt'), 'outside\n');
  await symlink(path.join(cwd, 'src', 'a.txt'), path.join(cwd, 'alias.txt'));
  await symlink(path.join(outside, 'secret.txt'), path.join(cwd, 'leak.txt'));
  await symlink(outside, path.join(cwd, 'out'));
  await symlink(path.join(outside, 'created-through-link.txt'), path.join(cwd, 'dangling-out'));
  await symlink(path.join(cwd, 'src', 'made.txt'), path.join(cwd, 'dangling-in'));
  execFileSync('mkfifo', [path.join(cwd, 'fifo')]);
  root = await rootFor(cwd);
});
afterAll(() => removeDir(base));

describe('readFileConfined', () => {
  it('reads a file inside, also through a symlink that stays inside', async () => {
    expect((await readFileConfined(root, path.join(cwd, 'src/a.txt'), 1024)).data.toString()).toBe(
      'inside\n',
    );
    const r = await readFileConfined(root, path.join(cwd, 'alias.txt'), 1024);
    expect(r.real).toBe(path.join(cwd, 'src', 'a.txt'));
  });

  it('refuses what really lies outside, naming where it lands', async () => {
    for (const p of ['leak.txt', 'out/secret.txt', '../outside/secret.txt']) {
      const e = await readFileConfined(root, path.resolve(cwd, p), 1024).catch((x: unknown) => x);
      expect(e, p).toBeInstanceOf(OutsideRootError);
      expect((e as OutsideRootError).real).toBe(path.join(outside, 'secret.txt'));
    }
  });

  it('refuses a FIFO and a directory without opening them for reading', async () => {
    const fifo = await readFileConfined(root, path.join(cwd, 'fifo'), 1024).catch((x: unknown) => x);
    expect(fifo).toBeInstanceOf(NotRegularFileError);
    expect((fifo as NotRegularFileError).kind).toBe('FIFO');
    const dir = await readFileConfined(root, path.join(cwd, 'src'), 1024).catch((x: unknown) => x);
    expect((dir as NotRegularFileError).kind).toBe('directory');
  });

  it('refuses a file over the cap', async () => {
    const e = await readFileConfined(root, path.join(cwd, 'src/a.txt'), 3).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(FileTooLargeError);
    expect((e as FileTooLargeError).size).toBe(7);
  });
});

describe('openFileForUpdate', () => {
  it('creates a new file and its directories inside', async () => {
    const f = await openFileForUpdate(root, path.join(cwd, 'new/deep/x.txt'), { create: true, mkdirs: true });
    expect(f.created).toBe(true);
    await f.replace('hello');
    f.close();
    expect(await readFile(path.join(cwd, 'new/deep/x.txt'), 'utf8')).toBe('hello');
  });

  it('never creates through a dangling symlink that points outside', async () => {
    const e = await openFileForUpdate(root, path.join(cwd, 'dangling-out'), {
      create: true,
      mkdirs: true,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OutsideRootError);
    expect(existsSync(path.join(outside, 'created-through-link.txt'))).toBe(false);
  });

  it('follows a dangling symlink that stays inside, creating its target', async () => {
    const f = await openFileForUpdate(root, path.join(cwd, 'dangling-in'), { create: true });
    expect(f.real).toBe(path.join(cwd, 'src', 'made.txt'));
    f.close();
  });

  it('never makes directories outside through a symlinked directory', async () => {
    const e = await openFileForUpdate(root, path.join(cwd, 'out/a/b/c.txt'), {
      create: true,
      mkdirs: true,
    }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(OutsideRootError);
    expect(existsSync(path.join(outside, 'a'))).toBe(false);
  });

  it('replaces the content of an existing file in place', async () => {
    await writeFile(path.join(cwd, 'src/r.txt'), 'a much longer original\n');
    const f = await openFileForUpdate(root, path.join(cwd, 'src/r.txt'), { create: false });
    expect(f.created).toBe(false);
    expect((await f.read(1024)).toString()).toBe('a much longer original\n');
    const st = await f.replace('short\n');
    f.close();
    expect(st.size).toBe(6);
    expect(await readFile(path.join(cwd, 'src/r.txt'), 'utf8')).toBe('short\n');
  });
});

describe('glob patterns and listing', () => {
  it.each([
    ['..{,}/.ssh/*', false],
    ['.{,.}/.ssh/*', false],
    ['{a,{b,..}}/x', false],
    ['\\.\\./x', false],
    ['/etc/*', false],
    ['~/x', false],
    ['**/../x', false],
    ['**/*.{ts,tsx}', true],
    ['src/**/*.test.{ts,js}', true],
    ['*.{test.ts,spec.ts}', true],
    ['foo..bar', true],
  ] as const)('%s → ok %s', (pattern, ok) => {
    expect(checkGlobPattern(pattern).ok).toBe(ok);
  });

  it('refuses a pattern whose braces expand past the cap', () => {
    expect(expandBraces('{a,b}'.repeat(11), 1024)).toBeUndefined();
    expect(checkGlobPattern('{a,b}'.repeat(11)).ok).toBe(false);
  });

  it('whatever the glob library makes of a pattern, nothing outside is listed', async () => {
    const signal = new AbortController().signal;
    for (const pattern of ['..{,}/outside/*', 'out/*', '{src,out}/*', '**/*']) {
      const { files } = await confinedGlob(root, cwd, pattern, signal);
      expect(
        files.filter((f) => f.includes('secret')),
        pattern,
      ).toEqual([]);
    }
    const { files, refusedDirs } = await confinedGlob(root, cwd, 'out/*', signal);
    expect(files).toEqual([]);
    expect(refusedDirs).toBe(1);
    expect((await confinedGlob(root, cwd, 'src/*.txt', signal)).files.sort()).toContain('src/a.txt');
  });
});
