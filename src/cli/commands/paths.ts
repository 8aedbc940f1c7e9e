import type { Command } from 'commander';
import { CommandFailed, out, printJson } from '../io.ts';

export function registerPaths(program: Command): void {
  program
    .command('paths')
    .description(
      'one shortest path to every edge of the chart (from @xstate/graph): the fact variants fed, the reason reached',
    )
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const [{ edgeName }, { computeEdgePaths }] = await Promise.all([
        import('../../coverage/coverage.ts'),
        import('../../coverage/paths.ts'),
      ]);
      const report = computeEdgePaths();
      if (opts.json) {
        printJson(
          report.paths.map((p) => ({
            edge: {
              from: p.edge.from,
              event: p.edge.event,
              guard: p.edge.guard,
              reason: p.edge.reason,
              to: p.edge.to,
            },
            steps: p.steps.map((s) => s.id),
            reason: p.edge.reason,
          })),
        );
      } else {
        for (const p of report.paths) {
          out(`${p.edge.reason}  ${p.edge.id}`);
          out(`    ${p.steps.map((s) => s.id).join(' → ')}`);
        }
        out('');
        out(
          `${report.paths.length}/${report.edges.length} edges reached (searched to depth ${report.depth})`,
        );
      }
      if (report.unreached.length > 0) {
        throw new CommandFailed(
          `no path reaches:\n${report.unreached.map((e) => `  ${edgeName(e)}`).join('\n')}`,
        );
      }
    });
}
