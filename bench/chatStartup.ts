/**
 * `reloop chat`: time from spawning the CLI in a pseudo-terminal (tmux) to the first prompt on
 * its screen, polled every 5 ms (so the figure is an upper bound by ≤ 5 ms plus one
 * capture-pane). Not part of `npm run bench`: `npx tsx bench/chatStartup.ts [runs]`.
 * Baseline printed beside it: `node -e 0` in the same pane, to the shell's exit marker.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/reloop.js', import.meta.url));
const runs = Number(process.argv[2] ?? 10);
let socket = '';
let n = 0;
const tmux = (...args: string[]) =>
  execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...args], { encoding: 'utf8' });

function timeToScreen(command: string, done: (screen: string) => boolean): number {
  const cwd = mkdtempSync(path.join(tmpdir(), 'reloop-bench-chat-'));
  socket = `reloop-bench-${process.pid}-${n++}`;
  const t0 = performance.now();
  tmux('new-session', '-d', '-s', 'b', '-x', '120', '-y', '40', '-c', cwd, command);
  for (;;) {
    const screen = tmux('capture-pane', '-p', '-t', 'b');
    if (done(screen)) break;
    execFileSync('sleep', ['0.005']);
  }
  const ms = performance.now() - t0;
  tmux('kill-server');
  return ms;
}

const env = 'env ANTHROPIC_API_KEY=sk-bench ANTHROPIC_BASE_URL=http://127.0.0.1:9';
const chat: number[] = [];
const bare: number[] = [];
for (let i = 0; i < runs; i++) {
  chat.push(
    timeToScreen(`${env} ${process.execPath} ${bin} chat`, (s) => /\n>\s*$/.test(`\n${s.trimEnd()}`)),
  );
  bare.push(timeToScreen(`${process.execPath} -e 0; echo DONE; sleep 5`, (s) => s.includes('DONE')));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `first prompt on screen: median ${median(chat).toFixed(0)} ms (min ${Math.min(...chat).toFixed(0)}) over ${runs}`,
);
console.log(
  `node -e 0 in the same pane: median ${median(bare).toFixed(0)} ms (min ${Math.min(...bare).toFixed(0)})`,
);
