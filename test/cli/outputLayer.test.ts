/**
 * The CLI prints through src/cli/io.ts only (out, err, LineWriter, writeText, printJson,
 * writeDocument), so every line a command prints is escaped for the terminal there and a new
 * command gets that without asking (docs/security.md, "What reaches your terminal"). A direct
 * write to stdout or stderr anywhere else in src/cli fails here, naming the file and line.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

const CLI = path.join(REPO_ROOT, 'src', 'cli');
const DIRECT = /process\.(stdout|stderr)\.write|console\.(log|error|warn|info|debug)|\.writeSync\(\s*[12]\b/;

async function sources(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) found.push(...(await sources(file)));
    else if (e.name.endsWith('.ts')) found.push(file);
  }
  return found;
}

describe('the CLI output layer', () => {
  it('src/cli writes to stdout and stderr only through io.ts', async () => {
    const offending: string[] = [];
    const files = await sources(CLI);
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) {
      if (file === path.join(CLI, 'io.ts')) continue;
      const lines = (await readFile(file, 'utf8')).split('\n');
      lines.forEach((l, i) => {
        if (DIRECT.test(l)) offending.push(`${path.relative(REPO_ROOT, file)}:${i + 1}: ${l.trim()}`);
      });
    }
    expect(offending).toEqual([]);
  });
});
