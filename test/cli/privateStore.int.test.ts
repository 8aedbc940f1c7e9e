/**
 * Issue 18, item 13 (the store's half): a store reloop creates is its owner's alone — directories
 * 0700, files 0600 — whatever wrote them: a run (stream, catalog, lock), a fork, an import, a copy.
 * Before, they were created 0755/0644, readable by every local user.
 */
import { lstat, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Transcript, text } from '../support/claudeCodeTranscript.ts';
import { onlyJson, runCli } from '../support/cli.ts';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-private-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Every directory and file under `dir` (itself included) with its permission bits. */
async function modes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (at: string) => {
    const st = await lstat(at);
    out[path.relative(root, at) || '.'] = (st.mode & 0o777).toString(8);
    if (st.isDirectory()) for (const name of await readdir(at)) await walk(path.join(at, name));
  };
  await walk(dir);
  return out;
}

describe('a store is created private', () => {
  it('run, fork, import and copy write 0700 directories and 0600 files', async () => {
    const cwd = root;
    await writeFile(path.join(root, 'script.json'), JSON.stringify({ turns: [{ text: 'hi' }] }));
    const run = await runCli(['run', '--store', 'st', '--script', 'script.json', '--json', 'go'], { cwd });
    expect(run.code, run.stderr).toBe(0);
    const [row] = onlyJson<{ id: string }[]>(await runCli(['sessions', '--store', 'st', '--json'], { cwd }));
    const fork = await runCli(['fork', row!.id, '--at', '2', '--store', 'st'], { cwd });
    expect(fork.code, fork.stderr).toBe(0);
    const t = new Transcript({ sessionId: 'imported' });
    t.prompt('hello');
    t.assistant([text('hi')]);
    await writeFile(path.join(root, 'imported.jsonl'), t.jsonl());
    const imported = await runCli(['import', 'imported.jsonl', '--store', 'st'], { cwd });
    expect(imported.code, imported.stderr).toBe(0);
    const copy = await runCli(['copy', '--from', 'st', '--to', 'copied'], { cwd });
    expect(copy.code, copy.stderr).toBe(0);

    for (const store of ['st', 'copied']) {
      const found = await modes(path.join(root, store));
      expect(Object.keys(found).filter((f) => f.endsWith('.jsonl'))).toHaveLength(3);
      expect(Object.keys(found)).toContain(path.join(store, 'catalog.json'));
      for (const [file, mode] of Object.entries(found)) {
        const isDir = file === store || file === path.join(store, 'sessions');
        expect([file, mode]).toEqual([file, isDir ? '700' : '600']);
      }
    }
  });
});
