/**
 * Embedding reloop: a session on a scripted model and a file store, one run, then the checks
 * a debugging user makes — the transitions taken, the state as of a record, verify replay.
 * Type-checked with the project (tsconfig includes examples/); run it with
 *   node --import tsx examples/embed.ts
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  builtinTools,
  loadRecords,
  openFileStore,
  ScriptedModelClient,
  Session,
  stateAt,
  verifyReplay,
} from '../src/index.ts';

const dir = await mkdtemp(path.join(tmpdir(), 'reloop-example-'));
const store = await openFileStore(path.join(dir, '.reloop'));
const model = new ScriptedModelClient({
  turns: [
    {
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'Glob', input: { pattern: '**/*' } }],
      stop_reason: 'tool_use',
      usage: {
        input_tokens: 100,
        output_tokens: 20,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 0,
      },
    },
    { text: 'The directory is empty.', stop_reason: 'end_turn', usage: undefined },
  ],
});

const session = await Session.create({ store, model, tools: builtinTools(), cwd: dir });
const result = await session.submit('What is in this directory?');
console.log(result.status, result.reason, `${result.turns} turns`);

const records = await loadRecords(store, session.id);
for (const r of records)
  if (r.type === 'transition') console.log(`${r.data.from} → ${r.data.to} [${r.data.reason}]`);

const early = await stateAt(store, session.id, 6);
console.log(`as of seq 6: ${early.messages.length} messages`);

const report = await verifyReplay(records);
console.log(report.ok ? 'replays identically' : `diverges at seq ${report.divergence?.seq}`);
await store.close();
