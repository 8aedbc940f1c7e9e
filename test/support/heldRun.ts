/**
 * A `reloop run` held in the middle, for tests that watch a session while it is written: a
 * scripted run with a tool round whose stop hook waits until the test releases it. The hook
 * touches `held` when it starts, so the test awaits that file (fs.watch, no polling) and
 * knows the run is in progress; `release()` lets the run finish.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, watch } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { CLI_BIN, scratchHomeEnv } from './cli.ts';

export interface HeldRun {
  session: string;
  child: ChildProcess;
  release(): Promise<void>;
  /** Exit code of the run once it ends. */
  exited: Promise<number | null>;
  output(): string;
}

function fileAppears(dir: string, name: string): Promise<void> {
  return new Promise((resolve) => {
    const w = watch(dir, () => {
      if (existsSync(path.join(dir, name))) {
        w.close();
        resolve();
      }
    });
    if (existsSync(path.join(dir, name))) {
      w.close();
      resolve();
    }
  });
}

export async function startHeldRun(dir: string, store: string): Promise<HeldRun> {
  const script = path.join(dir, 'held.json');
  await writeFile(
    script,
    JSON.stringify({
      turns: [
        {
          content: [
            { type: 'text', text: 'Looking around first.' },
            { type: 'tool_use', id: 'tu_1', name: 'Glob', input: { pattern: '*.json' } },
          ],
          stop_reason: 'tool_use',
        },
        { text: 'Done <b onmouseover=alert(1)>here</b>.', stop_reason: 'end_turn' },
      ],
    }),
  );
  const held = path.join(dir, 'held');
  const release = path.join(dir, 'release');
  const hook = `touch '${held}'; while [ ! -e '${release}' ]; do sleep 0.05; done`;
  const child = spawn(
    process.execPath,
    [CLI_BIN, 'run', '--script', script, '--store', store, '--cwd', dir, '--stop-hook', hook, 'hold on'],
    {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...scratchHomeEnv() },
    },
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const session = await new Promise<string>((resolve, reject) => {
    const onData = () => {
      const m = /session (s_[\w-]+)/.exec(out);
      if (m) {
        child.stdout.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) => reject(new Error(`reloop run exited ${code} before it started:\n${out}`)));
  });
  await fileAppears(dir, 'held');
  return {
    session,
    child,
    exited,
    output: () => out,
    release: () => writeFile(release, ''),
  };
}
