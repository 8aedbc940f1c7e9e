/**
 * Printed hints name the command as the user invoked it: `node <path>/bin/reloop.js` from a
 * clone, `npx reloop` from a project's node_modules/.bin, `reloop` when it is on the PATH.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_BIN, scratchHomeEnv } from '../support/cli.ts';

const SLOW = 120_000;
let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-hints-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function cli(
  entry: string,
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry, ...args], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? root, ...scratchHomeEnv() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('hints name the command as it was invoked', () => {
  it(
    'node bin/reloop.js: the path to it, relative to the current directory',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'clone-'));
      const r = await cli(CLI_BIN, ['run', 'hi'], cwd);
      expect(r.code).toBe(2);
      const rel = path.relative(cwd, CLI_BIN);
      expect(r.stderr).toContain(`try the offline demo: node ${rel} run --demo`);
      const s = await cli(CLI_BIN, ['sessions', '--store', 'none'], cwd);
      expect(s.stderr).toContain(`(a store is created by \`node ${rel} run\`)`);
    },
    SLOW,
  );

  it(
    'node_modules/.bin/reloop (a local install, npx): npx reloop',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'local-'));
      await mkdir(path.join(cwd, 'node_modules', '.bin'), { recursive: true });
      const bin = path.join(cwd, 'node_modules', '.bin', 'reloop');
      await symlink(CLI_BIN, bin);
      const r = await cli(bin, ['run', 'hi'], cwd);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('try the offline demo: npx reloop run --demo');
    },
    SLOW,
  );

  it(
    'a reloop on the PATH: reloop',
    async () => {
      const cwd = await mkdtemp(path.join(root, 'global-'));
      await mkdir(path.join(cwd, 'bin'));
      const bin = path.join(cwd, 'bin', 'reloop');
      await symlink(CLI_BIN, bin);
      const r = await cli(bin, ['run', 'hi'], cwd);
      expect(r.stderr).toContain('try the offline demo: reloop run --demo');
    },
    SLOW,
  );
});
