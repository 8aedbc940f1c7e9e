import { link, mkdir, readFile, rename, symlink, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtinTools } from '../../src/tools/builtin/index.ts';
import { WRITE_MAX_BYTES } from '../../src/tools/builtin/write.ts';
import { matchInWorker } from '../../src/tools/regexWorker.ts';
import type { AnyTool } from '../../src/tools/types.ts';
import { contextFor, removeDir, tempDir } from './toolHarness.ts';

/**
 * The file tools against the second adversarial pass: what an outside allow rule opens, hard
 * links, sizes a call can make the process hold, and what Grep keeps in memory.
 */

let base: string;
let cwd: string;
let outside: string;

beforeAll(async () => {
  base = await tempDir('reloop-red-tools-');
  cwd = path.join(base, 'proj');
  outside = path.join(base, 'outside');
  await mkdir(cwd);
  await mkdir(outside);
  await writeFile(path.join(outside, 'allowed.txt'), 'you may read this\n');
  await writeFile(path.join(outside, 'id_rsa'), 'KEY-MATERIAL\n');
  await symlink(outside, path.join(cwd, 'link'));
});
afterAll(() => removeDir(base));

function toolsWith(allow: readonly string[]): Map<string, AnyTool> {
  return new Map(builtinTools({ allowOutsideCwd: allow }).map((t) => [t.name, t]));
}

describe('allowOutsideCwd given the allow rules', () => {
  it('Read opens the file a rule names, and nothing else outside, whatever the name points at when opened', async () => {
    const tools = toolsWith([`Read(/${path.join(outside, 'allowed.txt')})`, 'Bash(ls:*)']);
    const read = tools.get('Read') as AnyTool;
    const { ctx } = contextFor(cwd);
    const ok = await read.call({ file_path: path.join(outside, 'allowed.txt') }, ctx);
    expect(ok.content).toContain('you may read this');
    // The policy saw `swap` point at the allowed file; by the time Read opens it, it points elsewhere.
    await symlink(path.join(outside, 'allowed.txt'), path.join(cwd, 'swap'));
    await unlink(path.join(cwd, 'swap'));
    await symlink(path.join(outside, 'id_rsa'), path.join(cwd, 'swap'));
    const swapped = await read.call({ file_path: 'swap' }, ctx);
    expect(swapped.isError).toBe(true);
    expect(swapped.content).not.toContain('KEY-MATERIAL');
    expect(swapped.content).toMatch(/outside the working directory/);
  });

  it('Grep and Glob list a symlinked directory outside only where their own rules reach', async () => {
    // An Edit rule speaks for the writing tools only (a Read rule would speak for Grep and Glob).
    const tools = toolsWith([`Edit(/${outside}/**)`]);
    const { ctx } = contextFor(cwd);
    const grep = await (tools.get('Grep') as AnyTool).call(
      { pattern: 'KEY', glob: 'link/*', output_mode: 'content' },
      ctx,
    );
    expect(grep.content).not.toContain('KEY-MATERIAL');
    const glob = await (tools.get('Glob') as AnyTool).call({ pattern: 'link/*' }, ctx);
    expect(glob.content).not.toContain('id_rsa');
    // A Grep rule for that directory opens it to Grep.
    const grepAllowed = toolsWith([`Grep(/${outside}/**)`]);
    const found = await (grepAllowed.get('Grep') as AnyTool).call(
      { pattern: 'KEY', glob: 'link/*', output_mode: 'content' },
      ctx,
    );
    expect(found.content).toContain('KEY-MATERIAL');
    // So does a Read rule: Claude Code applies Read rules to every tool that reads files.
    const readAllowed = toolsWith([`Read(/${outside}/**)`]);
    const viaRead = await (readAllowed.get('Grep') as AnyTool).call(
      { pattern: 'KEY', glob: 'link/*', output_mode: 'content' },
      ctx,
    );
    expect(viaRead.content).toContain('KEY-MATERIAL');
  });

  it('true still means "anywhere" (the policy checked every path), for SDK callers that want it', async () => {
    const read = builtinTools({ allowOutsideCwd: true }).find((t) => t.name === 'Read') as AnyTool;
    const { ctx } = contextFor(cwd);
    expect((await read.call({ file_path: 'link/id_rsa' }, ctx)).content).toContain('KEY-MATERIAL');
  });
});

describe('hard links', () => {
  it('Write and Edit refuse a file with other hard links; Read reads it', async () => {
    const target = path.join(outside, 'bashrc');
    await writeFile(target, 'original\n');
    await link(target, path.join(cwd, 'h.txt'));
    const tools = toolsWith([]);
    const { ctx, session } = contextFor(cwd);
    const read = await (tools.get('Read') as AnyTool).call({ file_path: 'h.txt' }, ctx);
    expect(read.isError).toBeFalsy();
    session.remember(read);
    const edit = await (tools.get('Edit') as AnyTool).call(
      { file_path: 'h.txt', old_string: 'original', new_string: 'changed' },
      ctx,
    );
    const write = await (tools.get('Write') as AnyTool).call(
      { file_path: 'h.txt', content: 'changed\n' },
      ctx,
    );
    for (const r of [edit, write]) {
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(/2 hard links/);
    }
    expect(await readFile(target, 'utf8')).toBe('original\n');
    // Once the other name is gone, it is an ordinary file again.
    await rename(target, path.join(cwd, 'moved-in.txt'));
    await unlink(path.join(cwd, 'moved-in.txt'));
    session.remember(await (tools.get('Read') as AnyTool).call({ file_path: 'h.txt' }, ctx));
    const again = await (tools.get('Write') as AnyTool).call(
      { file_path: 'h.txt', content: 'changed\n' },
      ctx,
    );
    expect(again.isError).toBeFalsy();
  });
});

describe('sizes', () => {
  it('Write refuses content over its cap before touching the file', async () => {
    const { ctx } = contextFor(cwd);
    const write = toolsWith([]).get('Write') as AnyTool;
    const r = await write.call({ file_path: 'big.txt', content: 'x'.repeat(WRITE_MAX_BYTES + 1) }, ctx);
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/over the cap/);
    await expect(readFile(path.join(cwd, 'big.txt'))).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('what Grep keeps in memory', () => {
  it('the worker keeps no lines when asked for none (files_with_matches, count), counts stay exact', async () => {
    const data = Buffer.from('a\n'.repeat(10_000));
    const signal = new AbortController().signal;
    const none = await matchInWorker('a', '', [{ index: 0, data }], 5000, signal, 0);
    expect(none).toEqual([{ index: 0, count: 10_000, lines: [] }]);
    const three = await matchInWorker('a', '', [{ index: 0, data }], 5000, signal, 3);
    expect(three[0]?.lines).toHaveLength(3);
  });

  it('content mode shows the first head_limit lines in path order and counts the rest exactly', async () => {
    const dir = path.join(cwd, 'many');
    await mkdir(dir);
    // 80 files × 100 matching lines: more than two read batches, more than twice head_limit.
    for (let i = 0; i < 80; i++)
      await writeFile(path.join(dir, `f${String(i).padStart(2, '0')}.txt`), 'hit\n'.repeat(100));
    const { ctx } = contextFor(cwd);
    const r = await (toolsWith([]).get('Grep') as AnyTool).call(
      { pattern: 'hit', path: 'many', output_mode: 'content', head_limit: 5 },
      ctx,
    );
    const lines = String(r.content).split('\n');
    expect(lines.slice(0, 5)).toEqual([1, 2, 3, 4, 5].map((n) => `many/f00.txt:${n}:hit`));
    expect(lines[5]).toBe('[… 7995 more lines not shown; narrow the search or raise head_limit …]');
  });
});

describe('glob patterns that backtrack for minutes', () => {
  // Compiled by the glob library to `[^/]*?[^/]` fourteen times over: C(60, 14) ways to fail on a
  // 60-character name. On the main thread this pinned the process for hours.
  const EVIL = `${'*?'.repeat(14)}Z`;

  it('Glob and Grep give up at their listing deadline, and the next call works', async () => {
    const dir = path.join(cwd, 'backtrack');
    await mkdir(dir);
    await writeFile(path.join(dir, `${'n'.repeat(60)}.txt`), 'x\n');
    const tools = new Map(builtinTools({ listTimeoutMs: 300 }).map((t) => [t.name, t]));
    const { ctx } = contextFor(dir);
    const glob = await (tools.get('Glob') as AnyTool).call({ pattern: EVIL }, ctx);
    const grep = await (tools.get('Grep') as AnyTool).call({ pattern: 'x', glob: EVIL }, ctx);
    for (const r of [glob, grep]) {
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(/gave up: listing took more than 0.3 s/);
    }
    const ok = await (tools.get('Glob') as AnyTool).call({ pattern: '*.txt' }, ctx);
    expect(ok.content).toBe(`${'n'.repeat(60)}.txt`);
  });

  it('an abort stops the listing at once', async () => {
    const dir = path.join(cwd, 'backtrack');
    const ac = new AbortController();
    const { ctx } = contextFor(dir, undefined, ac.signal);
    const glob = builtinTools().find((t) => t.name === 'Glob') as AnyTool;
    const pending = glob.call({ pattern: EVIL }, ctx);
    setTimeout(() => ac.abort(), 100);
    expect((await pending).content).toBe('Glob aborted.');
  });
});
