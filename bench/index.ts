import { benchChildren } from './children.ts';
import { benchE2e } from './e2e.ts';
import { benchImport } from './import.ts';
import { benchLogSize, benchLongLines } from './log.ts';
import { benchLoop } from './loop.ts';
import { benchMcp } from './mcp.ts';
import { benchOtel } from './otel.ts';
import { benchPostgres } from './postgres.ts';
import { benchReplay } from './replay.ts';
import { benchRerun } from './rerun.ts';
import { benchSandbox } from './sandbox.ts';
import { benchStartup } from './startup.ts';
import { benchStore } from './store.ts';
import { benchViewer } from './viewer.ts';

/**
 * `npm run bench`: every benchmark, printed as tables (docs/BENCHMARKS.md records the numbers
 * and how to reproduce them). It runs compiled (tsconfig.bench.json), against the built CLI.
 * Run on an otherwise idle machine; BENCH_ROUNDS sets the loop size.
 */
const rounds = Number(process.env.BENCH_ROUNDS ?? 10_000);
await benchLoop(rounds);
await benchChildren();
await benchStore();
await benchReplay();
await benchRerun();
await benchLogSize();
await benchLongLines();
await benchPostgres();
await benchViewer();
await benchImport();
await benchSandbox();
await benchStartup();
await benchOtel();
await benchE2e();
await benchMcp();
