/**
 * MCP servers for tests: the reference servers from npm (run with this Node, from node_modules)
 * and the hostile fixture. Loopback only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { StdioServerConfig } from '../../src/mcp/config.ts';

const pkg = (name: string) =>
  fileURLToPath(new URL(`../../node_modules/@modelcontextprotocol/${name}/dist/index.js`, import.meta.url));

export const EVERYTHING = pkg('server-everything');
export const FILESYSTEM = pkg('server-filesystem');
export const MEMORY = pkg('server-memory');
export const HOSTILE = fileURLToPath(new URL('../fixtures/mcp/hostile.mjs', import.meta.url));

export function stdio(script: string, ...args: string[]): StdioServerConfig {
  return { command: process.execPath, args: [script, ...args] };
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** server-everything over streamable HTTP on a free port; resolves once it listens. */
export async function everythingHttp(): Promise<{
  url: string;
  child: ChildProcess;
  stop: () => Promise<void>;
}> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const t = setTimeout(() => reject(new Error(`server-everything did not listen: ${seen}`)), 20_000);
    child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      seen += s;
      if (/listening on port/i.test(seen)) {
        clearTimeout(t);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}: ${seen}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}
