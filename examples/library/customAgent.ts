import { MemoryEventStore, Session } from 'reloop';
import { scriptedModel, text, toolUse } from 'reloop/testing';
import { lookupTicket } from './lookupTicket.ts';

const session = await Session.create({
  store: new MemoryEventStore(),
  // Offline here: the model's answers are scripted. `new AnthropicModelClient()` calls the API.
  model: scriptedModel([
    toolUse('lookupTicket', { id: 'T-1' }),
    toolUse('lookupTicket', { id: 'T-2' }),
    text('T-1 is open: login fails on Safari. I may not look at T-2.'),
  ]),
  tools: [lookupTicket],
  // Replaces reloop's default system prompt; `{ preset: 'default', append: '…' }` adds to it instead.
  systemPrompt: 'You are a support agent. Answer from the tickets only.',
  // The permission callback: every call the model asks for is decided here before it runs.
  canUseTool: ({ tool, input }) =>
    tool.name === 'lookupTicket' && (input as { id: string }).id === 'T-2'
      ? { behavior: 'deny', message: 'T-2 belongs to another team' }
      : { behavior: 'allow' },
});

const result = await session.submit('What is the state of T-1 and T-2?');
console.log(result.status, result.reason, `${result.turns} turns`); // completed completed 3 turns
console.log(session.state.messages.last()); // the model's answer
