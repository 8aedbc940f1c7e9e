import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { messageOf } from '../../lib/errors.ts';
import type { Session } from '../../runtime/session.ts';
import type { EventStore } from '../../store/types.ts';
import { type GlobalOptions, out, storeLabel, storeLocationOf } from '../io.ts';
import { dollars, statusLine } from './transcript.ts';

/** What the slash commands need of the interactive session (chat.ts). */
export interface SlashContext {
  readonly session: Session | null;
  readonly store: EventStore;
  readonly cwd: string;
  readonly model: string;
  readonly mode: string;
  readonly globals: GlobalOptions;
  readonly sessionRules: readonly string[];
  open(id: string): Promise<void>;
  closeSession(reason: string): Promise<void>;
  setModel(name: string): Promise<void>;
  compact(): Promise<void>;
}

const HELP: readonly (readonly [string, string])[] = [
  ['/help', 'this list'],
  ['/status', 'model, permission mode, store, session, state'],
  ['/cost', 'tokens and cost so far (this session and its last run)'],
  ['/log [n]', 'the last n transitions (default 10)'],
  ['/compact', 'summarise the history now (a manual compaction, logged as one)'],
  ['/fork [seq]', 'a new session from this one up to seq (default: all of it); you continue in the fork'],
  ['/viz', 'write the viewer page of this session (HTML) and name the file'],
  ['/model <name>', 'the model of the next runs'],
  ['/clear', 'leave this session: the next prompt starts a new one'],
  ['/exit', 'leave (as Ctrl-D)'],
];

/** Runs one `/command`; `exit` asks the session to end. Errors are printed, never thrown. */
export async function runSlash(ctx: SlashContext, line: string): Promise<'exit' | undefined> {
  const [name = '', ...args] = line.trim().split(/\s+/);
  try {
    switch (name) {
      case '/help':
      case '/?':
        for (const [cmd, what] of HELP) out(`  ${cmd.padEnd(14)} ${what}`);
        out('  //text sends a prompt that starts with /. Esc interrupts a run, Ctrl-D exits.');
        return;
      case '/exit':
      case '/quit':
        return 'exit';
      case '/status':
        status(ctx);
        return;
      case '/cost':
        cost(ctx);
        return;
      case '/log':
        await log(ctx, args[0]);
        return;
      case '/fork':
        await fork(ctx, args[0]);
        return;
      case '/viz':
        await viz(ctx);
        return;
      case '/model':
        if (!args[0]) {
          out(`model: ${ctx.model} (change it with /model <name>)`);
          return;
        }
        await ctx.setModel(args[0]);
        out(`model: ${args[0]} from the next prompt on`);
        return;
      case '/clear':
        await ctx.closeSession('clear');
        out('new session: the next prompt starts it');
        return;
      case '/compact':
        await ctx.compact();
        return;
      default:
        out(`unknown command ${name}: /help lists them`);
        return;
    }
  } catch (e) {
    const code = (e as { code?: unknown })?.code;
    out(`error: ${messageOf(e)}${typeof code === 'string' ? ` [${code}]` : ''}`);
    return;
  }
}

function needSession(ctx: SlashContext): Session | null {
  if (!ctx.session) out('no session yet: the first prompt starts one');
  return ctx.session;
}

function status(ctx: SlashContext): void {
  const s = ctx.session;
  const state = s?.state;
  const run = state?.currentRun ?? state?.runs.last();
  out(
    `model:   ${ctx.model}`,
    `mode:    ${ctx.mode}${ctx.sessionRules.length ? ` (+ allowed this session: ${ctx.sessionRules.join(', ')})` : ''}`,
    `store:   ${storeLabel(ctx.globals)}`,
    `cwd:     ${ctx.cwd}`,
    `session: ${s ? `${s.id}${state?.title ? ` "${state.title.slice(0, 60)}"` : ''}` : '(new: the first prompt starts it)'}`,
    `state:   ${run ? `${run.status === 'running' ? `running in ${run.state}` : `${run.status} (${run.reason})`} · ${state!.runs.length} runs · ${state!.messages.length} messages` : 'no run yet'}`,
  );
}

function cost(ctx: SlashContext): void {
  const s = needSession(ctx);
  if (!s) return;
  const u = s.state.usage;
  out(
    `session: ${u.inputTokens} in / ${u.outputTokens} out (cache read ${u.cacheReadInputTokens}, written ${u.cacheCreationInputTokens}) · ${dollars(u.costUsd)}`,
  );
  const last = s.state.runs.last();
  if (last)
    out(
      `last run: ${last.usage.inputTokens} in / ${last.usage.outputTokens} out · ${dollars(last.usage.costUsd)}`,
    );
}

async function log(ctx: SlashContext, n: string | undefined): Promise<void> {
  const s = needSession(ctx);
  if (!s) return;
  const count = n === undefined ? 10 : Number(n);
  if (!Number.isInteger(count) || count < 1) {
    out('/log takes a number ≥ 1');
    return;
  }
  const last: string[] = [];
  let turn = 0;
  const { turnAfter } = await import('../../store/turns.ts');
  for await (const r of ctx.store.read(s.id)) {
    if (r.type === 'run.started') turn = 1;
    if (r.type !== 'transition') continue;
    const line = `  ${String(r.seq).padStart(5)}  ${statusLine({ ...r.data, turn, cost_usd: 0 }).replace(/ · \$[0-9.]+$/, '')}`;
    turn = turnAfter(turn, r.data.reason);
    last.push(line);
    if (last.length > count) last.shift();
  }
  if (last.length === 0) out('no transitions yet');
  else out(...last);
}

async function fork(ctx: SlashContext, at: string | undefined): Promise<void> {
  const s = needSession(ctx);
  if (!s) return;
  if (s.running) {
    out('a run is going: fork after it');
    return;
  }
  const seq = at === undefined ? s.state.lastSeq : Number(at);
  if (!Number.isInteger(seq) || seq < 1 || seq > s.state.lastSeq) {
    out(`/fork takes a seq of this session, 1-${s.state.lastSeq}`);
    return;
  }
  const { forkSession } = await import('../../replay/fork.ts');
  const id = await forkSession(ctx.store, s.id, seq);
  out(`forked ${s.id}@${seq} → ${id} (the original is untouched)`);
  await ctx.open(id);
}

async function viz(ctx: SlashContext): Promise<void> {
  const s = needSession(ctx);
  if (!s) return;
  const { viewerPage } = await import('../commands/viz.ts');
  const html = await viewerPage(ctx.store, s.id);
  const where = storeLocationOf(ctx.globals);
  const dir = where.kind === 'file' ? path.join(where.dir, 'viewer') : path.join(tmpdir(), 'reloop-viewer');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${s.id}.html`);
  await writeFile(file, html, { mode: 0o600 });
  out(`wrote ${file} (${Math.ceil(Buffer.byteLength(html) / 1024)} kB): open it in a browser`);
}
