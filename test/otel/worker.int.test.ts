/**
 * `reloop worker --otel` on PostgreSQL: the runs a worker drives are traced live, their spans
 * carry the worker's identity in the resource, and `export otel` of the same session from the
 * database gives the same spans.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { onlyJson, runCli } from '../support/cli.ts';
import { startOtlpReceiver } from '../support/otlpReceiver.ts';
import { createTestDatabase, describePg, type TestDatabase } from '../support/postgres.ts';
import { startWorkerProcess } from '../support/workerProcess.ts';
import { treeOf } from './scenario.ts';

const SLOW = 120_000;
let db: TestDatabase | undefined;
let root: string;

describePg('worker --otel (PostgreSQL)', () => {
  beforeAll(async () => {
    db = await createTestDatabase();
    root = await mkdtemp(path.join(tmpdir(), 'reloop-otel-worker-'));
  });
  afterAll(async () => {
    await db?.drop();
    await rm(root, { recursive: true, force: true });
  });

  it(
    "exports the runs it drives, as the worker's; export otel from the database gives the same spans",
    async () => {
      const url = db!.url;
      const script = path.join(root, 'script.json');
      await writeFile(
        script,
        JSON.stringify({
          turns: [
            {
              content: [{ type: 'tool_use', id: 'toolu_glob', name: 'Glob', input: { pattern: '*.json' } }],
              stop_reason: 'tool_use',
            },
            { text: 'There is a script.' },
          ],
        }),
      );
      const rx = await startOtlpReceiver();
      const worker = startWorkerProcess(['--store', url, '--id', 'w-otel', '--otel'], {
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
      });
      try {
        const submitted = await runCli(['submit', '--script', script, '--store', url, '--json', 'look'], {
          cwd: root,
        });
        const session = onlyJson<{ sessionId: string }>(submitted).sessionId;
        await worker.until((e) => e.type === 'finished' && e.session === session);
        worker.child.kill('SIGTERM');
        expect(await worker.exit).toEqual({ code: 0, signal: null });
        expect(treeOf(rx.spans)).toEqual([
          'invoke_agent reloop',
          '  chat claude-sonnet-4-6',
          '  execute_tool Glob',
          '  chat claude-sonnet-4-6',
        ]);
        for (const s of rx.spans) {
          expect(s.resource).toMatchObject({
            'service.name': 'reloop',
            'service.instance.id': 'w-otel',
            'reloop.worker.id': 'w-otel',
          });
          expect(s.attributes['reloop.session.id']).toBe(session);
        }
        const again = await startOtlpReceiver();
        try {
          const r = await runCli(['export', 'otel', session, '--endpoint', again.url, '--store', url], {
            cwd: root,
          });
          expect(r.code, r.stderr).toBe(0);
          const plain = (spans: typeof rx.spans) =>
            new Map(spans.map((s) => [s.spanId, JSON.stringify({ ...s, resource: undefined })]));
          expect(plain(again.spans)).toEqual(plain(rx.spans));
        } finally {
          await again.close();
        }
      } finally {
        if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
        await rx.close();
      }
    },
    SLOW,
  );
});
