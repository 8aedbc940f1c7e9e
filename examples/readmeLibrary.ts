import { AnthropicModelClient, builtinTools, openFileStore, Session } from 'reloop';

const session = await Session.create({
  store: await openFileStore('.reloop'),
  model: new AnthropicModelClient(),
  tools: builtinTools(),
});
const result = await session.submit('fix the failing test'); // { status, reason, turns, usage }
console.log(result.status, result.reason);
