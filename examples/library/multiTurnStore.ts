import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadRecords, openFileStore, Session, verifyReplay } from 'reloop';
import { scriptedModel, text, toolUse } from 'reloop/testing';
import { lookupTicket } from './lookupTicket.ts';

// A file store keeps every session's log (`reloop sessions --store <dir>` lists them);
// `openStore(storeLocation('postgres://…'))` opens a PostgreSQL one, `MemoryEventStore` keeps nothing.
const dir = path.join(await mkdtemp(path.join(tmpdir(), 'reloop-library-')), '.reloop');
const store = await openFileStore(dir);
const model = scriptedModel([
  toolUse('lookupTicket', { id: 'T-1' }),
  text('T-1 is open.'),
  text('Yes: T-2.'),
]);

// Multi-turn: each submit() is one run of the same session, the history carried over.
const session = await Session.create({ store, model, tools: [lookupTicket] });
await session.submit('How is T-1?');
console.log(session.id, `${session.state.messages.length} messages`); // … 4 messages

// Later, in another process: open the session from its log and go on.
const again = await Session.open(session.id, { store, model, tools: [lookupTicket] });
const result = await again.submit('Any closed ticket?');
console.log(result.status, `${again.state.messages.length} messages`); // completed 6 messages

// The log alone replays identically: no model, no tools.
const report = await verifyReplay(await loadRecords(store, session.id));
console.log(report.ok ? 'replays identically' : `diverges at seq ${report.divergence?.seq}`);
await store.close();
