import { MemoryEventStore, Session } from 'reloop';
import { scriptedModel, text, toolUse } from 'reloop/testing';
import { lookupTicket } from './lookupTicket.ts';

const session = await Session.create({
  store: new MemoryEventStore(),
  model: scriptedModel([
    toolUse('lookupTicket', { id: 'T-1' }),
    toolUse('lookupTicket', { id: 'T-9' }),
    text('T-1 is open.'),
  ]),
  tools: [lookupTicket],
  // Claude Code's hook events, in the Claude Agent SDK's shape: a matcher, then callbacks (or
  // `{ type: 'command', command }` for a shell command, as in settings files).
  hooks: {
    UserPromptSubmit: [
      { hooks: [async () => ({ hookSpecificOutput: { additionalContext: 'Today is Monday.' } })] },
    ],
    PreToolUse: [
      {
        matcher: 'lookupTicket',
        hooks: [
          async (input) =>
            (input.tool_input as { id: string }).id === 'T-9'
              ? {
                  hookSpecificOutput: {
                    permissionDecision: 'deny',
                    permissionDecisionReason: 'T-9 is archived',
                  },
                }
              : {},
        ],
      },
    ],
    PostToolUse: [
      {
        matcher: 'lookupTicket',
        hooks: [async () => ({ hookSpecificOutput: { additionalContext: 'Tickets are from the EU desk.' } })],
      },
    ],
  },
});

const result = await session.submit('How are T-1 and T-9?');
// Each hook's answer is a recorded fact (`hook.decided`): replay never runs a hook again.
for (const m of session.state.messages.view()) console.log(m.role, JSON.stringify(m.content).slice(0, 100));
console.log(result.status); // completed
