/**
 * Preloaded into a benchmark's child process (`node --import …/cpuAtExit.js …`): at exit it
 * writes the process's CPU time to stderr, one line `cpu-ms <user> <system>`. CPU time is far
 * less sensitive than wall time to other load on a shared host.
 */
import { writeSync } from 'node:fs';

process.on('exit', () => {
  const { user, system } = process.cpuUsage();
  writeSync(2, `cpu-ms ${user / 1000} ${system / 1000}\n`);
});
