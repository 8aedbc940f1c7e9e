import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyProblems } from '../../../src/model/history.ts';
import type { Script } from '../../../src/model/script.ts';
import { loadRecords, stateAt } from '../../../src/replay/loadSession.ts';
import { verifyTree } from '../../../src/replay/verifyTree.ts';
import { openFileStore } from '../../../src/store/fileStore.ts';
import { onlyJson, runCli } from '../../support/cli.ts';
import {
  httpError,
  type MessageReply,
  type MessagesServer,
  type ScriptedReply,
  startMessagesServer,
} from '../../support/messagesServer.ts';
import { crashTreeScript } from './support/crashTree.ts';
import { recordsOf } from './support.ts';

const childProcess = path.join(import.meta.dirname, 'support/crashTreeChild.ts');
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

/** Runs the tree in a process and SIGKILLs it while the sub-agent's tool runs. */
async function runUntilHang(dir: string, baseURL?: string) {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', childProcess, dir, ...(baseURL ? [baseURL] : [])],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const acked = new Map<string, number>();
  let parent = '';
  let killed = false;
  let buf = '';
  await new Promise<void>((resolve) => {
    proc.stdout.on('data', (chunk: Buffer) => {
      buf += chunk.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const [what, a, b] = buf.slice(0, nl).split(' ');
        buf = buf.slice(nl + 1);
        if (what === 'session') parent = a!;
        if (what === 'ack') acked.set(a!, Math.max(acked.get(a!) ?? 0, Number(b)));
        if (what === 'hanging') {
          killed = proc.kill('SIGKILL');
        }
      }
    });
    proc.on('exit', () => resolve());
  });
  return { parent, acked, killed };
}

/** The script as a Messages server: each request answered by its conversation and how far along it is. */
function serve(script: Script): Promise<MessagesServer> {
  const reply = (turn: Script['turns'][number] | undefined): ScriptedReply => {
    if (!turn || !('stop_reason' in turn)) return httpError(418, 'invalid_request_error', 'not scripted');
    const content = [
      ...(turn.text !== undefined ? [{ type: 'text', text: turn.text }] : []),
      ...(turn.content ?? []),
    ];
    return { kind: 'message', content: content as MessageReply['content'], stopReason: turn.stop_reason };
  };
  return startMessagesServer({
    apiKey: KEY,
    fallback: (req) => {
      const first = req.body.messages?.[0]?.content;
      const turn = req.body.messages?.filter((m) => m.role === 'assistant').length ?? 0;
      const child = first === 'Look at the project and report.';
      return reply((child ? script.children!.toolu_task!.turns : script.turns)[turn]);
    },
  });
}

const KEY = 'sk-ant-test-crash';

describe.each([
  'scripted',
  'sdk',
] as const)('kill -9 while a sub-agent runs a tool, then reloop run --resume (%s model)', (kind) => {
  let server: MessagesServer | undefined;
  beforeAll(async () => {
    if (kind === 'sdk') server = await serve(crashTreeScript());
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the child is resumed from its own log (not restarted), its result reaches the parent, which completes', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'reloop-tree-crash-'));
    dirs.push(dir);
    const { parent, acked, killed } = await runUntilHang(dir, server?.url);
    expect(killed).toBe(true);

    let store = await openFileStore(dir);
    try {
      const before = await loadRecords(store, parent);
      const started = recordsOf(before, 'child.started');
      expect(started).toHaveLength(1);
      expect(recordsOf(before, 'child.finished')).toEqual([]);
      const child = started[0]!.data.child;
      const childBefore = await loadRecords(store, child);
      // Nothing acknowledged is lost, in either log.
      expect(before.length).toBeGreaterThanOrEqual(acked.get(parent)!);
      expect(childBefore.length).toBeGreaterThanOrEqual(acked.get(child)!);
      // The child was inside its hang tool: started, never finished.
      expect(recordsOf(childBefore, 'tool.started').map((r) => r.data.name)).toEqual(['note', 'hang']);
      expect(recordsOf(childBefore, 'tool.finished').map((r) => r.data.name)).toEqual(['note']);
      const answeredBefore = recordsOf(childBefore, 'model.responded').length;
      expect(answeredBefore).toBe(2);

      // `reloop run --resume`, with only what was not answered (the script), or against the
      // same server: a restarted child would ask its first turn again.
      const script = crashTreeScript();
      const remaining = path.join(dir, 'remaining.json');
      await writeFile(
        remaining,
        JSON.stringify({
          turns: script.turns.slice(recordsOf(before, 'model.responded').length),
          children: { toolu_task: { turns: script.children!.toolu_task!.turns.slice(answeredBefore) } },
        }),
      );
      await store.close();
      const asked = server?.requests.length ?? 0;
      const model = server ? ['--model', 'claude-sonnet-4-6'] : ['--script', remaining];
      // The crashed process offered its own tools: the CLI resumes it with the built-in ones.
      const cli = await runCli(
        ['run', '--resume', parent, '--accept-setup-change', ...model, '--store', dir, '--json'],
        {
          cwd: dir,
          env: server ? { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: server.url } : {},
        },
      );
      expect(cli.code, cli.stderr).toBe(0);
      if (server) {
        // After the crash the child was asked for its third turn only, the parent for its second.
        const turns = server.requests
          .slice(asked)
          .map((r) => [
            r.body.messages?.[0]?.content,
            r.body.messages?.filter((m) => m.role === 'assistant').length,
          ]);
        expect(turns).toEqual([
          ['Look at the project and report.', 2],
          ['delegate the look-around', 1],
        ]);
      }
      const res = onlyJson<{ status: string; reason: string; runId: string }>(cli);
      expect(res).toMatchObject({ status: 'completed', reason: 'completed' });
      const tree = await runCli(['replay', parent, '--verify', '--tree', '--store', dir], { cwd: dir });
      expect(tree.code, tree.stdout).toBe(0);
      store = await openFileStore(dir);

      const after = await loadRecords(store, parent);
      const childAfter = await loadRecords(store, child);
      // The child: one session, its interrupted run closed honestly, then continued.
      expect(recordsOf(childAfter, 'session.created')).toHaveLength(1);
      const ends = recordsOf(childAfter, 'run.ended');
      expect(ends.map((r) => r.data.reason)).toEqual(['interrupted', 'completed']);
      expect(ends[0]!.data.interrupted?.inFlight).toEqual(['tool hang (toolu_hang)']);
      const runs = recordsOf(childAfter, 'run.started');
      expect(runs[1]!.data.resumedFrom).toBe(runs[0]!.run);
      expect(recordsOf(childAfter, 'user.message').map((r) => r.data.message.content)).toEqual([
        'Look at the project and report.',
      ]);
      const hang = recordsOf(childAfter, 'tool.finished').find((r) => r.data.name === 'hang')!;
      expect(hang.data).toMatchObject({ outcome: 'interrupted', synthetic: true });
      // Its result reached the parent, in the parent's resumed run.
      const parentEnds = recordsOf(after, 'run.ended');
      expect(parentEnds.map((r) => r.data.reason)).toEqual(['interrupted', 'completed']);
      expect(parentEnds[0]!.data.interrupted?.inFlight).toEqual([`sub-agent ${child} (toolu_task): resumed`]);
      const finished = recordsOf(after, 'child.finished');
      expect(finished.map((r) => [r.run, r.data.status, r.data.turns])).toEqual([
        [res.runId, 'completed', 3],
      ]);
      const task = recordsOf(after, 'tool.finished').find((r) => r.data.toolUseId === 'toolu_task')!;
      expect(task.data.result).toEqual({
        content: 'Resumed after the crash: the project looks fine.',
        isError: false,
      });
      // Nothing acknowledged was lost or rewritten.
      expect(after.slice(0, before.length)).toEqual(before);
      expect(childAfter.slice(0, childBefore.length)).toEqual(childBefore);
      const state = await stateAt(store, parent);
      expect(historyProblems(state.messages.view())).toEqual([]);
      const verified = await verifyTree(store, parent);
      expect(verified.divergence).toBeNull();
      expect(verified.sessions.map((s) => s.session)).toEqual([parent, child]);
    } finally {
      await store.close();
    }
  });
});
