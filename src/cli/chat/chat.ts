import { messageOf } from '../../lib/errors.ts';
import type { Session, SessionOptions } from '../../runtime/session.ts';
import type { EventStore } from '../../store/types.ts';
import type { AskAnswer, CanUseTool, PermissionRequest } from '../../tools/types.ts';
import type { RunOptions } from '../commands/run.ts';
import { type GlobalOptions, openStore, out, selfCommand } from '../io.ts';
import type { PreparedRun } from '../runSession.ts';
import type { AskChoice } from './ask.ts';
import { pickSession, sessionsOf } from './pickSession.ts';
import { runSlash, type SlashContext } from './slash.ts';
import { ChatTerminal } from './terminal.ts';
import { Transcript } from './transcript.ts';

export interface ChatOptions extends Omit<RunOptions, 'resume'> {
  /** `--resume <id>`, or `--resume` alone (true): the picker. */
  resume?: string | true;
  continue?: boolean;
}

const PROMPT = '> ';
const STOP_SIGNALS = ['SIGTERM', 'SIGHUP', 'SIGINT'] as const;

/** What the session needs that takes a while to load (the runtime, the tools, the store). */
interface Loaded {
  prepared: PreparedRun;
  store: EventStore;
  mode: string;
}

/**
 * `reloop chat` (and `reloop` alone on a terminal): an interactive session on the working
 * directory. Each prompt is one run of the same session (one log), shown as it streams
 * (transcript.ts); Esc or Ctrl-C aborts the run in progress (logged `aborted`, open tool calls
 * paired by the chart) and the prompt comes back; Ctrl-C twice or Ctrl-D on an empty line
 * exits. The session is created by the first prompt (its title), so opening and leaving
 * writes nothing. Returns the exit code.
 */
export async function runChat(opts: ChatOptions): Promise<number> {
  const term = new ChatTerminal(process.stdin, process.stdout);
  term.start();
  const chat = new Chat(term, opts);
  const onSignal = (sig: NodeJS.Signals) => chat.stop(`interrupted (${sig})`);
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  try {
    return await chat.loop();
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
    term.stop();
  }
}

class Chat implements SlashContext {
  session: Session | null = null;
  readonly sessionRules: string[] = [];
  private loaded: Promise<Loaded> | null = null;
  private env: Loaded | null = null;
  private exiting = false;
  /** Ctrl-C was the last thing pressed: another one exits. */
  private armed = false;
  private policy: CanUseTool | null = null;
  private modelName: string | undefined;

  constructor(
    readonly term: ChatTerminal,
    readonly opts: ChatOptions,
  ) {
    this.modelName = opts.model;
  }

  get store(): EventStore {
    return this.env!.store;
  }

  get cwd(): string {
    return this.env!.prepared.cwd;
  }

  get model(): string {
    return this.modelName ?? this.env?.prepared.settings.model ?? 'claude-sonnet-4-6 (default)';
  }

  get mode(): string {
    return this.env?.mode ?? this.opts.permissionMode ?? 'default';
  }

  get globals(): GlobalOptions {
    return this.opts;
  }

  /** Ends the session after the run in progress (a signal, Ctrl-C twice, /exit). */
  stop(reason: string): void {
    this.exiting = true;
    this.session?.abort(reason);
    this.term.cancel();
  }

  async loop(): Promise<number> {
    out(`reloop chat · ${process.cwd()}`);
    out('  /help for commands · Esc interrupts a run · Ctrl-D exits');
    // The runtime loads while the first prompt is typed (it is what takes time to start).
    this.loaded = this.load();
    this.loaded.catch(() => this.term.cancel());
    if (this.opts.resume !== undefined || this.opts.continue) await this.openChosen();
    try {
      while (!this.exiting) {
        const read = await this.term.readLine(PROMPT);
        if (this.env === null) await this.ready();
        if (read.kind === 'eof') break;
        if (read.kind === 'escape') continue;
        if (read.kind === 'interrupt') {
          if (this.armed) break;
          this.armed = true;
          out('(Ctrl-C again or Ctrl-D to exit)');
          continue;
        }
        this.armed = false;
        const text = read.text;
        if (text.trim() === '') continue;
        if (text.startsWith('/') && !text.startsWith('//')) {
          if ((await runSlash(this, text)) === 'exit') break;
          continue;
        }
        await this.runPrompt(text.startsWith('//') ? text.slice(1) : text);
      }
    } finally {
      await this.leave();
    }
    return 0;
  }

  private async ready(): Promise<Loaded> {
    this.env ??= await this.loaded!;
    return this.env;
  }

  private async load(): Promise<Loaded> {
    const { prepareRun, checkRunFlags } = await import('../runSession.ts');
    const runOpts = this.runOptions();
    const prepared = await prepareRun(runOpts, {
      askUser: (req, message) => this.ask(req, message),
      canUseTool: (req) => this.policy!(req),
    });
    const store = await openStore(this.opts, { create: true });
    // The mode the settings and flags resolved to (permissionSetup); the policy is theirs too.
    const mode = prepared.mode ?? checkRunFlags(runOpts).mode ?? 'default';
    const env = { prepared, store, mode };
    this.env = env;
    await this.rebuildPolicy();
    return env;
  }

  private runOptions(): RunOptions {
    const { resume: _resume, continue: _continue, ...rest } = this.opts;
    return { ...rest, ...(this.modelName ? { model: this.modelName } : {}) };
  }

  /**
   * The run's policy (every settings layer and the flags: src/cli/permissionFlags.ts) plus the
   * rules answered "don't ask again" (deny rules still win: one policy).
   */
  async rebuildPolicy(): Promise<void> {
    this.policy = this.env!.prepared.policyWith!(this.sessionRules);
  }

  sessionOptions(): SessionOptions {
    const { prepared, store } = this.env!;
    return {
      store,
      model: prepared.model,
      ...prepared.options,
      settings: { ...prepared.settings, ...(this.modelName ? { model: this.modelName } : {}) },
    };
  }

  /** `-c` / `--resume [id]`: the session to open before the first prompt. */
  private async openChosen(): Promise<void> {
    const env = await this.ready();
    let id: string | null = null;
    if (typeof this.opts.resume === 'string') id = this.opts.resume;
    else if (this.opts.resume === true) id = await pickSession(this.term, env.store, this.cwd, Date.now());
    else {
      id = (await sessionsOf(env.store, this.cwd))[0]?.id ?? null;
      if (!id) out('no session of this directory to continue: starting a new one');
    }
    if (id) await this.open(id);
  }

  async open(id: string): Promise<void> {
    const { Session } = await import('../../runtime/session.ts');
    const { SessionNotFoundError } = await import('../../store/errors.ts');
    if (!(await this.store.exists(id))) throw new SessionNotFoundError(id);
    await this.closeSession('resume');
    this.session = await Session.open(id, this.sessionOptions());
    const s = this.session.state;
    const last = s.runs.last();
    const status = s.currentRun
      ? 'interrupted (it is closed and continued by the next prompt)'
      : (last?.status ?? 'idle');
    out(
      `session ${id}${s.title ? ` "${s.title.slice(0, 60)}"` : ''} · ${s.messages.length} messages · ${s.runs.length} runs · ${status}`,
    );
  }

  async setModel(name: string): Promise<void> {
    this.modelName = name;
    // The session's options are its own: reopened from its log with the new model.
    if (this.session) await this.open(this.session.id);
  }

  /** `/compact`: a manual compaction run of this session (Session.compact), Esc interrupts it. */
  async compact(): Promise<void> {
    const session = this.session;
    if (!session) {
      out('no session yet: the first prompt starts one');
      return;
    }
    const before = session.state.messages.length;
    this.term.onKeys((k) => {
      if (k.kind !== 'key' || (k.name !== 'escape' && k.name !== 'ctrl-c')) return false;
      session.abort(`interrupted by the user (${k.name === 'escape' ? 'Esc' : 'Ctrl-C'})`);
      return true;
    });
    try {
      const r = await session.compact();
      const { dollars } = await import('./transcript.ts');
      const after = session.state.messages.length;
      if (r.status === 'completed')
        out(
          `✓ compacted: ${before} messages → ${after} (the summary${after > 1 ? ' and the latest messages' : ''}) · ${dollars(r.usage.costUsd)}`,
        );
      else out(`✗ ${r.status} (${r.reason})${r.error ? `: ${r.error}` : ''}`);
    } finally {
      this.term.onKeys(null);
    }
  }

  /** Ends the current session object (its MCP servers, its SessionEnd hooks); the next prompt starts another. */
  async closeSession(reason: string): Promise<void> {
    const s = this.session;
    if (!s) return;
    this.session = null;
    await s.close();
    await s.end(reason).catch((e: unknown) => out(`warning: SessionEnd hooks: ${messageOf(e)}`));
  }

  private async runPrompt(text: string): Promise<void> {
    const { Session } = await import('../../runtime/session.ts');
    if (!this.session) {
      this.session = await Session.create({ ...this.sessionOptions(), title: titleOf(text) });
      out(`session ${this.session.id}`);
    }
    const session = this.session;
    const transcript = new Transcript();
    let interrupted = false;
    this.term.onKeys((k) => {
      if (k.kind !== 'key' || (k.name !== 'escape' && k.name !== 'ctrl-c')) return false;
      if (k.name === 'ctrl-c' && (interrupted || this.armed)) {
        this.exiting = true;
        return true;
      }
      this.armed = k.name === 'ctrl-c';
      if (!interrupted) {
        interrupted = true;
        transcript.line(`  (interrupting: ${k.name === 'escape' ? 'Esc' : 'Ctrl-C'})`);
        session.abort(`interrupted by the user (${k.name === 'escape' ? 'Esc' : 'Ctrl-C'})`);
      }
      return true;
    });
    try {
      for await (const e of session.stream(text)) transcript.show(e);
    } catch (e) {
      const code = (e as { code?: unknown })?.code;
      transcript.line(`error: ${messageOf(e)}${typeof code === 'string' ? ` [${code}]` : ''}`);
    } finally {
      transcript.end();
      this.term.onKeys(null);
    }
  }

  /** A permission ask, inline (ask.ts): answered by number or y/n; Esc denies and interrupts the run. */
  private asking: Promise<unknown> = Promise.resolve();
  private ask(req: PermissionRequest, message: string | undefined): Promise<AskAnswer> {
    // One question at a time (parallel sub-agents share this askUser).
    const answer = this.asking.then(() => this.askOne(req, message));
    this.asking = answer.catch(() => undefined);
    return answer;
  }

  private async askOne(req: PermissionRequest, message: string | undefined): Promise<AskAnswer> {
    const { approvalQuestion } = await import('../../tools/permissions/display.ts');
    const { choiceLines, parseChoice, ruleFor } = await import('./ask.ts');
    const rule = ruleFor(req);
    out(`  ? ${approvalQuestion(req.tool.name, req.input, message)}`);
    for (const l of choiceLines(rule)) out(`    ${l}`);
    for (;;) {
      const read = await this.term.readLine('  answer: ', { escape: true });
      if (read.kind !== 'line') {
        if (read.kind !== 'eof') this.session?.abort('interrupted by the user (Esc)');
        return false;
      }
      const choice = parseChoice(read.text, rule);
      if (choice === undefined) {
        out(`  (answer with a number${rule ? ' 1-4' : ' 1-2'}, y or n)`);
        continue;
      }
      const decided: AskChoice = choice === 'no-reason' ? await this.reason() : choice;
      return this.apply(decided);
    }
  }

  private async reason(): Promise<AskChoice> {
    const read = await this.term.readLine('  why not (Enter: no reason)? ', { escape: true });
    const text = read.kind === 'line' ? read.text.trim() : '';
    return text ? { kind: 'no', reason: text } : { kind: 'no' };
  }

  private async apply(choice: AskChoice): Promise<AskAnswer> {
    if (choice.kind === 'no') return choice.reason ? { allow: false, message: choice.reason } : false;
    if (choice.kind === 'always') {
      this.sessionRules.push(choice.rule);
      if (choice.scope === 'project') {
        const { addLocalRule, localSettingsFile } = await import('../../settings/localRules.ts');
        try {
          await addLocalRule(this.cwd, 'allow', choice.rule);
          out(`  added allow ${choice.rule} to ${localSettingsFile(this.cwd)}`);
        } catch (e) {
          out(
            `  warning: ${localSettingsFile(this.cwd)} was not changed: ${messageOf(e)} (the rule holds for this session)`,
          );
        }
      }
      await this.rebuildPolicy();
    }
    return true;
  }

  private async leave(): Promise<void> {
    const env = this.env;
    const id = this.session?.id;
    await this.closeSession('prompt_input_exit');
    if (env) await env.store.close();
    if (id) out(`session ${id} · continue it: ${selfCommand()} chat --resume ${id}  (or -c)`);
  }
}

function titleOf(prompt: string): string {
  return prompt.replace(/\s+/g, ' ').trim().slice(0, 80);
}
