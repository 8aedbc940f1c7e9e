import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/tools/builtin/common.ts';
import { editTool } from '../../src/tools/builtin/edit.ts';
import { readTool } from '../../src/tools/builtin/read.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let root: string;
let cwd: string;
let file: string;
const edit = editTool();

async function readFirst(content: string) {
  await writeFile(file, content);
  const { ctx, session } = contextFor(cwd);
  await callTool(readTool(), { file_path: 'f.ts' }, ctx);
  return { ctx, session };
}

beforeEach(async () => {
  root = await tempDir('reloop-edit-');
  cwd = path.join(root, 'p');
  await mkdir(cwd);
  file = path.join(cwd, 'f.ts');
});
afterEach(() => removeDir(root));

describe('Edit', () => {
  it('replaces a unique match, shows the result and returns the updated fact', async () => {
    const { ctx, session } = await readFirst('const a = 1;\nconst b = 2;\n');
    const out = await callTool(edit, { file_path: 'f.ts', old_string: 'b = 2', new_string: 'b = 3' }, ctx);
    expect(out.isError).toBeFalsy();
    expect(textOf(out)).toBe(
      'Edited f.ts: replaced 1 occurrence.\n     1\tconst a = 1;\n     2\tconst b = 3;',
    );
    expect(await readFile(file, 'utf8')).toBe('const a = 1;\nconst b = 3;\n');
    expect(session.fileRead(file)?.sha256).toBe(sha256('const a = 1;\nconst b = 3;\n'));
    // The returned fact lets a second edit go through without a new Read.
    const again = await callTool(edit, { file_path: 'f.ts', old_string: 'a = 1', new_string: 'a = 0' }, ctx);
    expect(again.isError).toBeFalsy();
  });

  it('refuses a file that was not read first', async () => {
    await writeFile(file, 'x');
    const { ctx } = contextFor(cwd);
    const out = await callTool(edit, { file_path: 'f.ts', old_string: 'x', new_string: 'y' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([true, expect.stringMatching(/has not been read/)]);
    expect(await readFile(file, 'utf8')).toBe('x');
  });

  it('refuses a file changed since it was read', async () => {
    const { ctx } = await readFirst('let v = 1;\n');
    await writeFile(file, 'let v = 1; // touched by a formatter\n');
    const out = await callTool(edit, { file_path: 'f.ts', old_string: 'v = 1', new_string: 'v = 2' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([
      true,
      expect.stringMatching(/changed since it was last read/),
    ]);
    expect(await readFile(file, 'utf8')).toBe('let v = 1; // touched by a formatter\n');
  });

  it('needs a unique match unless replace_all', async () => {
    const { ctx } = await readFirst('x();\nx();\nx();\n');
    const out = await callTool(edit, { file_path: 'f.ts', old_string: 'x()', new_string: 'y()' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([true, expect.stringMatching(/found 3 times.*replace_all/s)]);
    const all = await callTool(
      edit,
      { file_path: 'f.ts', old_string: 'x()', new_string: 'y()', replace_all: true },
      ctx,
    );
    expect(textOf(all)).toMatch(/^Edited f.ts: replaced 3 occurrences/);
    expect(await readFile(file, 'utf8')).toBe('y();\ny();\ny();\n');
  });

  it('reports not found and identical strings', async () => {
    const { ctx } = await readFirst('abc\n');
    const none = await callTool(edit, { file_path: 'f.ts', old_string: 'zzz', new_string: 'y' }, ctx);
    expect([none.isError, textOf(none)]).toEqual([true, expect.stringMatching(/not found/)]);
    const same = await callTool(edit, { file_path: 'f.ts', old_string: 'abc', new_string: 'abc' }, ctx);
    expect([same.isError, textOf(same)]).toEqual([true, expect.stringMatching(/identical/)]);
  });

  it('keeps $ patterns in new_string literal', async () => {
    const { ctx } = await readFirst('price\n');
    await callTool(edit, { file_path: 'f.ts', old_string: 'price', new_string: "$& $' $1" }, ctx);
    expect(await readFile(file, 'utf8')).toBe("$& $' $1\n");
  });

  it('creates a new file from an empty old_string, but not over an existing one', async () => {
    const { ctx } = contextFor(cwd);
    const created = await callTool(edit, { file_path: 'new/n.ts', old_string: '', new_string: 'n' }, ctx);
    expect(textOf(created)).toBe('Created new/n.ts.');
    expect(await readFile(path.join(cwd, 'new/n.ts'), 'utf8')).toBe('n');
    const again = await callTool(edit, { file_path: 'new/n.ts', old_string: '', new_string: 'm' }, ctx);
    expect([again.isError, textOf(again)]).toEqual([true, expect.stringMatching(/already exists/)]);
  });

  it('reports missing files and paths outside cwd', async () => {
    const { ctx } = contextFor(cwd);
    const missing = await callTool(edit, { file_path: 'nope.ts', old_string: 'a', new_string: 'b' }, ctx);
    expect(textOf(missing)).toBe('File does not exist: nope.ts');
    const out = await callTool(edit, { file_path: '../f.ts', old_string: 'a', new_string: 'b' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([
      true,
      expect.stringMatching(/outside the working directory/),
    ]);
  });

  it('refuses to edit a file that is not UTF-8 text', async () => {
    await writeFile(file, Buffer.from([0xff, 0xfe, 0x41, 0x0a]));
    const { ctx, session } = contextFor(cwd);
    session.facts.set(file, { path: file, sha256: sha256(await readFile(file)), mtimeMs: 0 });
    const out = await callTool(edit, { file_path: 'f.ts', old_string: 'A', new_string: 'B' }, ctx);
    expect([out.isError, textOf(out)]).toEqual([true, expect.stringMatching(/not a UTF-8 text file/)]);
  });
});
