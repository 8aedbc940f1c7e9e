/**
 * Child process of the crash test: runs the scripted session on a file store and prints
 * `ack <seq>` after every durable commit, so the parent knows what was acknowledged when it
 * kills this process with SIGKILL.
 */
import { ScriptedModelClient } from '../../../src/model/scripted.ts';
import { Session } from '../../../src/runtime/session.ts';
import { openFileStore } from '../../../src/store/fileStore.ts';
import type { EventStore } from '../../../src/store/types.ts';
import { crashScript, lookTool, noteTool } from './crashScript.ts';

const dir = process.argv[2]!;
const store = await openFileStore(dir);
const acking: EventStore = {
  append: async (session, records, options) => {
    await store.append(session, records, options);
    process.stdout.write(`ack ${records[records.length - 1]!.seq}\n`);
  },
  read: (s, r) => store.read(s, r),
  list: () => store.list(),
  lastSeq: (s) => store.lastSeq(s),
  exists: (s) => store.exists(s),
  close: () => store.close(),
};
const session = await Session.create({
  store: acking,
  model: new ScriptedModelClient(crashScript()),
  tools: [lookTool, noteTool],
  settings: { maxTurns: 1000 },
});
process.stdout.write(`session ${session.id}\n`);
const result = await session.submit('run every round');
process.stdout.write(`done ${result.status}\n`);
await store.close();
