// Runs inside a network namespace of its own (`unshare -rn`): the database link of one process.
// It gives the namespace an address (10.77.0.1 on lo), relays a TCP port on it to a Unix socket
// that the test relays to PostgreSQL, and runs the command given after the socket path with
// `{PORT}` replaced. SIGUSR1 cuts the link: the address is deleted (a connect then fails
// ENETUNREACH, as when a network goes away) and the connections through it are reset.
// SIGUSR2 restores it. It exits as the command does. Plain JavaScript: it runs without a loader.
import { execFileSync, spawn } from 'node:child_process';
import net from 'node:net';

const ADDR = '10.77.0.1';
const [socketPath, command, ...args] = process.argv.slice(2);
const ip = (...a) => execFileSync('ip', a, { stdio: 'inherit' });
ip('link', 'set', 'lo', 'up');
ip('addr', 'add', `${ADDR}/32`, 'dev', 'lo');

const open = new Set();
const server = net.createServer((down) => {
  const up = net.connect(socketPath);
  const pair = [down, up];
  for (const s of pair) open.add(s);
  const end = () => {
    for (const s of pair) {
      s.destroy();
      open.delete(s);
    }
  };
  for (const s of pair) {
    s.on('error', end);
    s.on('close', end);
  }
  down.pipe(up);
  up.pipe(down);
});

server.listen(0, ADDR, () => {
  const port = String(server.address().port);
  const child = spawn(
    command,
    args.map((a) => a.replaceAll('{PORT}', port)),
    { stdio: 'inherit' },
  );
  process.on('SIGUSR1', () => {
    // Reset first (the address must still be there for the reset to arrive), then the address.
    // (Only the namespace's TCP ends can be reset; the Unix ends are simply closed.)
    for (const s of open) {
      if (s.remoteAddress) s.resetAndDestroy();
      else s.destroy();
    }
    open.clear();
    ip('addr', 'del', `${ADDR}/32`, 'dev', 'lo');
    process.stderr.write('netnsLink: cut\n');
  });
  process.on('SIGUSR2', () => {
    ip('addr', 'add', `${ADDR}/32`, 'dev', 'lo');
    process.stderr.write('netnsLink: restored\n');
  });
  process.on('SIGTERM', () => child.kill('SIGTERM'));
  child.on('exit', (code, signal) => {
    server.close();
    process.exit(code ?? (signal === 'SIGKILL' ? 137 : 1));
  });
});
