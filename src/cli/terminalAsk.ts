import { createInterface } from 'node:readline/promises';
import { messageOf } from '../lib/errors.ts';
import { printableText } from '../lib/printable.ts';
import { addLocalRule, localSettingsFile } from '../settings/localRules.ts';
import { approvalQuestion } from '../tools/permissions/display.ts';
import type { AskAnswer, AskUser } from '../tools/types.ts';
import { choiceLines, parseChoice, ruleFor } from './chat/ask.ts';
import { err } from './io.ts';

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

export interface TerminalAskOptions {
  /**
   * Ctrl-C at the prompt: the run is to end `aborted` (the CLI aborts the session here); the
   * call is denied meanwhile, so nothing runs.
   */
  onInterrupt?: () => void;
}

/** What the policy's message adds to the question (its "Allow Tool: …?" head is already shown). */
function beyondQuestion(message: string | undefined): string | undefined {
  if (!message) return undefined;
  const rest = message.replace(/^Allow [^\n]*?\?(\s+|$)/s, '').trim();
  return rest || undefined;
}

/**
 * `reloop run`'s approval prompt on a terminal, with Claude Code's choices (src/cli/chat/ask.ts):
 * yes; yes and don't ask again for this rule in this run, or in this project (an allow rule added
 * to `.claude/settings.local.json`, as Claude Code does); no, with an optional reason the model
 * is told. The question is shown once, whole and printable (the model chose the input;
 * src/tools/permissions/display.ts); an answer that is not one of the choices asks again with a
 * short line only. A reader is made per question and closed once it is answered: lines that
 * came in the same chunk as the answer go with that reader. Serialised by `oneAtATime`.
 * Ctrl-C at the prompt calls `onInterrupt` and denies the call; end of input (Ctrl-D) denies it.
 */
export function terminalAsk(
  input: NodeJS.ReadableStream = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
  opts: TerminalAskOptions = {},
): AskUser {
  // Rules answered "don't ask again" in this run: the same call is not asked twice.
  const remembered = new Set<string>();
  return oneAtATime(async (req, message): Promise<AskAnswer> => {
    const rule = ruleFor(req);
    if (rule && remembered.has(rule)) return true;
    const rl = createInterface({ input, output });
    const stop = new AbortController();
    let interrupted = false;
    rl.on('SIGINT', () => {
      interrupted = true;
      stop.abort();
    });
    rl.on('close', () => stop.abort());
    const line = async (q: string): Promise<string | null> => {
      try {
        return await rl.question(printableText(q), { signal: stop.signal });
      } catch {
        return null;
      }
    };
    try {
      const head = approvalQuestion(req.tool.name, req.input, beyondQuestion(message));
      let text = await line(`\n${head}\n${choiceLines(rule).join('\n')}\n> `);
      let choice = text === null ? undefined : parseChoice(text, rule);
      while (text !== null && choice === undefined) {
        text = await line(`answer ${rule ? '1-4' : '1-2'}, y or n ("n: <why>" tells the model why)\n> `);
        choice = text === null ? undefined : parseChoice(text, rule);
      }
      if (choice === 'no-reason') {
        const why = await line('why not? (the model is told; Enter to say nothing) ');
        if (why === null && !interrupted) return false;
        choice = { kind: 'no', ...(why?.trim() ? { reason: why.trim() } : {}) };
      }
      if (interrupted || choice === undefined) {
        if (interrupted) opts.onInterrupt?.();
        return {
          allow: false,
          message: interrupted ? 'interrupted at the permission prompt (Ctrl-C)' : 'no answer (end of input)',
        };
      }
      if (choice.kind === 'yes') return true;
      if (choice.kind === 'no') return choice.reason ? { allow: false, message: choice.reason } : false;
      remembered.add(choice.rule);
      if (choice.scope === 'project') {
        try {
          await addLocalRule(req.cwd, 'allow', choice.rule);
        } catch (e) {
          err(`warning: ${choice.rule} was not saved to ${localSettingsFile(req.cwd)}: ${messageOf(e)}`);
        }
      }
      return true;
    } finally {
      rl.close();
    }
  });
}
