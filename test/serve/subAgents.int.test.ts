/** `reloop serve`'s viewer page of a parent holds its sub-agents, as `reloop viz` does. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startViewerServer, type ViewerServer } from '../../src/serve/server.ts';
import { type FileEventStore, openFileStore } from '../../src/store/fileStore.ts';
import { parentSession, taskTurn } from '../runtime/children/support.ts';
import { textTurn } from '../support/harness.ts';

let dir: string;
let store: FileEventStore;
let served: ViewerServer;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'reloop-serve-tree-'));
  store = await openFileStore(dir, { onWarning: () => undefined });
  served = await startViewerServer({ store, storeDir: dir, port: 0 });
}, 60_000);
afterAll(async () => {
  await served?.close();
  await store?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('reloop serve and sub-agents', () => {
  it("a parent's page holds its child, linked to the Task call", async () => {
    const h = await parentSession(
      {
        turns: [taskTurn([{ id: 'toolu_s', prompt: 'look' }]), textTurn('done')],
        children: { toolu_s: { turns: [textTurn('looked')] } },
      },
      { store },
    );
    await h.session.submit('go');
    const [child] = await h.children();
    const html = await (await fetch(`${served.url}/sessions/${h.session.id}`)).text();
    const data = /<script type="application\/json" id="reloop-data">(.*?)<\/script>/s.exec(html)![1]!;
    const sessions = (JSON.parse(data) as { sessions: { id: string; role: string; parent: unknown }[] })
      .sessions;
    expect(sessions.map((s) => [s.id, s.role])).toEqual([
      [h.session.id, 'main'],
      [child, 'child'],
    ]);
    expect(sessions[1]!.parent).toMatchObject({ session: h.session.id, toolUseId: 'toolu_s' });
  });
});
