import { createInterface } from 'node:readline/promises';
import { printableText } from '../lib/printable.ts';
import { approvalQuestion } from '../tools/permissions/display.ts';
import type { AskUser } from '../tools/types.ts';

/**
 * One question at a time, in the order they were asked. Parallel sub-agents share the run's
 * `askUser`: without this, two prompts would be on the terminal at once, each with its own
 * reader on stdin, and the answer typed for one could be taken by the other. Each call waits
 * until every earlier one has been answered (or has failed) before its question is shown.
 */
export function oneAtATime(ask: AskUser): AskUser {
  let previous: Promise<unknown> = Promise.resolve();
  return (request, message) => {
    const answer = previous.then(() => ask(request, message));
    previous = answer.catch(() => undefined);
    return answer;
  };
}

/**
 * `reloop run`'s approval prompt on a terminal: the question (whole and printable: the model
 * chose the input; src/tools/permissions/display.ts), then `y` or anything else for no. A
 * reader is made per question and closed once it is answered: lines that came in the same
 * chunk as the answer go with that reader. Serialised by `oneAtATime`.
 */
export function terminalAsk(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): AskUser {
  return oneAtATime(async (req, message) => {
    const rl = createInterface({ input, output });
    try {
      const question = printableText(`\n${approvalQuestion(req.tool.name, req.input, message)}\n[y/N] `);
      const answer = await rl.question(question);
      return /^y(es)?$/i.test(answer.trim());
    } finally {
      rl.close();
    }
  });
}
