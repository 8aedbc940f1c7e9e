/**
 * Child process of the sub-agent crash test: runs the parent (with one sub-agent) on a file
 * store, prints `ack <session> <seq>` after every durable commit and `hanging` when the
 * sub-agent's tool runs, so the test can SIGKILL this process right there. The model is the
 * script, or the real SDK against the Messages server at the URL given after the store.
 */
import { AgentCatalog } from '../../../../src/agents/index.ts';
import { AnthropicModelClient } from '../../../../src/model/anthropic.ts';
import { ScriptedModelClient } from '../../../../src/model/scripted.ts';
import { Session } from '../../../../src/runtime/session.ts';
import { openFileStore } from '../../../../src/store/fileStore.ts';
import type { EventStore } from '../../../../src/store/types.ts';
import { crashTreeScript, hangTool, noteTool } from './crashTree.ts';

const dir = process.argv[2]!;
const baseURL = process.argv[3];
const store = await openFileStore(dir);
const acking: EventStore = {
  append: async (session, records, options) => {
    await store.append(session, records, options);
    process.stdout.write(`ack ${session} ${records[records.length - 1]!.seq}\n`);
  },
  read: (s, r) => store.read(s, r),
  list: () => store.list(),
  lastSeq: (s) => store.lastSeq(s),
  exists: (s) => store.exists(s),
  close: () => store.close(),
};
const session = await Session.create({
  store: acking,
  model: baseURL
    ? new AnthropicModelClient({ apiKey: 'sk-ant-test-crash', baseURL })
    : new ScriptedModelClient(crashTreeScript()),
  settings: { model: 'claude-sonnet-4-6' },
  tools: [noteTool, hangTool(() => process.stdout.write('hanging\n'))],
  subAgents: { agents: new AgentCatalog() },
});
process.stdout.write(`session ${session.id}\n`);
await session.submit('delegate the look-around');
process.stdout.write('done\n');
