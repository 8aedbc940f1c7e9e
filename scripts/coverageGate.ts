/**
 * Run after vitest: fails (exit 1) unless the logs the generated-path scenarios wrote to
 * $RELOOP_COVERAGE_STORE cover every transition reason and every chart edge.
 *
 *   RELOOP_COVERAGE_STORE=<dir> node --import tsx scripts/coverageGate.ts [--min <percent>]
 */
import { coverageGate } from '../src/coverage/gate.ts';

const dir = process.env.RELOOP_COVERAGE_STORE;
const minAt = process.argv.indexOf('--min');
const min = minAt > 0 ? Number(process.argv[minAt + 1]) : 100;

if (!dir) {
  process.stderr.write('coverage gate: set RELOOP_COVERAGE_STORE to the store the coverage tests wrote\n');
  process.exitCode = 2;
} else if (!Number.isFinite(min) || min < 0 || min > 100) {
  process.stderr.write('coverage gate: --min must be a percentage between 0 and 100\n');
  process.exitCode = 2;
} else {
  const gate = await coverageGate(dir, min);
  const write = (s: string) => (gate.ok ? process.stdout : process.stderr).write(`${s}\n`);
  for (const line of gate.lines) write(line);
  process.exitCode = gate.ok ? 0 : 1;
}
