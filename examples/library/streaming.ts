import { MemoryEventStore, Session } from 'reloop';
import { scriptedModel, text, toolUse } from 'reloop/testing';
import { lookupTicket } from './lookupTicket.ts';

const session = await Session.create({
  store: new MemoryEventStore(),
  model: scriptedModel([toolUse('lookupTicket', { id: 'T-1' }), text('T-1 is open.')]),
  tools: [lookupTicket],
});

// One run as typed events, in the shapes of the Claude Agent SDK's query(); submit() stays.
const events = session.stream('How is T-1?');
for await (const event of events) {
  if (event.type === 'stream_event' && event.event.type === 'content_block_delta') {
    if (event.event.delta.type === 'text_delta') process.stdout.write(event.event.delta.text);
  } else if (event.type === 'system' && event.subtype === 'transition') {
    console.log(`\n${event.from} → ${event.to} [${event.reason}]`);
  } else if (event.type === 'system' && event.subtype === 'tool_result') {
    console.log(`${event.name}: ${event.outcome}`);
  } else if (event.type === 'result') {
    console.log(`\n${event.subtype}: ${event.result} (${event.num_turns} turns)`);
  }
}
