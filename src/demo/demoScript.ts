import type { Script } from '../model/script.ts';

/** The demo's sub-agent: the `Task` call that starts it, and the prompt it gets. */
export const DEMO_TASK_ID = 'toolu_task_test';
const DEMO_TASK_PROMPT =
  'Read test.js in the working directory, run `node test.js`, and report what the test checks and how it fails.';

/**
 * The demo's model: a scripted session that fixes the bug in project/sum.js with the real
 * tools, and on the way goes through every kind of continuation a newcomer should see:
 * a sub-agent (a general-purpose child that reads the failing test and reports, while the
 * parent reads the code), tool rounds, auto-compaction, max-tokens escalation and recovery,
 * a transport retry and a stop-hook block.
 */
export function demoScript(): Script {
  const usage = (input: number, output: number) => ({
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: 0,
    cache_creation_input_tokens: 0,
  });
  return {
    turns: [
      {
        content: [
          {
            type: 'text',
            text: "I'll read the README and the code while a sub-agent looks at the failing test.",
          },
          { type: 'tool_use', id: 'toolu_read_readme', name: 'Read', input: { file_path: 'README.md' } },
          { type: 'tool_use', id: 'toolu_read_sum', name: 'Read', input: { file_path: 'sum.js' } },
          {
            type: 'tool_use',
            id: DEMO_TASK_ID,
            name: 'Task',
            input: {
              description: 'Report on the failing test',
              prompt: DEMO_TASK_PROMPT,
              subagent_type: 'general-purpose',
            },
          },
        ],
        stop_reason: 'tool_use',
        // Input tokens as the API would count them: ~1 600 of tool definitions and system
        // prompt, then the history (the README is ~700 of them).
        usage: usage(1_650, 120),
      },
      {
        content: [
          { type: 'text', text: 'Now let me run the test to see the failure.' },
          { type: 'tool_use', id: 'toolu_run_test_1', name: 'Bash', input: { command: 'node test.js' } },
        ],
        stop_reason: 'tool_use',
        // With the test's output this puts the context past the demo's threshold (2 800).
        usage: usage(2_700, 80),
      },
      {
        for: 'compaction',
        text:
          '1. Goal — make the failing test in test.js pass.\n2. Done so far — read README.md and sum.js; a sub-agent read test.js and ran it; ran `node test.js`.\n' +
          '3. Files — sum.js defines sum(a, b) and returns a - b.\n4. Commands — `node test.js` fails: sum(2, 3) returned -1.\n' +
          '5. Open errors — AssertionError: sum(2, 3) should be 5.\n6. Next step — fix the operator in sum.js and rerun the test.',
        stop_reason: 'end_turn',
        usage: usage(2_750, 150),
      },
      {
        text: 'The failure says sum(2, 3) returned -1, which means the function subtracts where it should add. Before changing it, let me explain the whole',
        stop_reason: 'max_tokens',
        usage: usage(2_150, 8_192),
      },
      {
        text: 'The failure says sum(2, 3) returned -1: sum.js subtracts instead of adding. The test expects',
        stop_reason: 'max_tokens',
        usage: usage(2_150, 9_000),
      },
      { error: { status: 529, type: 'overloaded_error', message: 'Overloaded', retry_after_ms: 300 } },
      {
        text: 'The code looks right to me; I believe the tests pass now.',
        stop_reason: 'end_turn',
        usage: usage(2_200, 40),
      },
      {
        content: [
          { type: 'text', text: 'The stop hook is right: the test still fails. Fixing the operator.' },
          {
            type: 'tool_use',
            id: 'toolu_edit_sum',
            name: 'Edit',
            input: { file_path: 'sum.js', old_string: 'return a - b;', new_string: 'return a + b;' },
          },
        ],
        stop_reason: 'tool_use',
        usage: usage(2_300, 90),
      },
      {
        content: [
          { type: 'tool_use', id: 'toolu_run_test_2', name: 'Bash', input: { command: 'node test.js' } },
        ],
        stop_reason: 'tool_use',
        usage: usage(2_400, 40),
      },
      {
        text: 'Fixed: sum() in sum.js subtracted its arguments; it now returns a + b, and `node test.js` passes.',
        stop_reason: 'end_turn',
        usage: usage(2_450, 60),
      },
    ],
    children: {
      // The sub-agent: its own session, its own log, the same real tools.
      [DEMO_TASK_ID]: {
        turns: [
          {
            content: [
              { type: 'text', text: 'Reading the test, then running it.' },
              { type: 'tool_use', id: 'toolu_child_read', name: 'Read', input: { file_path: 'test.js' } },
            ],
            stop_reason: 'tool_use',
            usage: usage(900, 40),
          },
          {
            content: [
              { type: 'tool_use', id: 'toolu_child_run', name: 'Bash', input: { command: 'node test.js' } },
            ],
            stop_reason: 'tool_use',
            usage: usage(1_100, 30),
          },
          {
            text:
              'test.js imports sum from sum.js and asserts sum(2, 3) === 5 and sum(-1, 1) === 0. ' +
              '`node test.js` fails on the first assertion: sum(2, 3) returned -1, so sum subtracts instead of adding.',
            stop_reason: 'end_turn',
            usage: usage(1_300, 60),
          },
        ],
      },
    },
  };
}
