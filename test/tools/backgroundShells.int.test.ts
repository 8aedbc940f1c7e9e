import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackgroundShells } from '../../src/tools/backgroundShells.ts';
import { bashTool } from '../../src/tools/builtin/bash.ts';
import { bashOutputTool, killShellTool } from '../../src/tools/builtin/bashOutput.ts';
import { processGroupAlive } from '../../src/tools/processGroup.ts';
import { RunResources } from '../../src/tools/runScope.ts';
import type { ToolContext } from '../../src/tools/types.ts';
import { callTool, contextFor, removeDir, tempDir, textOf } from './toolHarness.ts';

let cwd: string;
const bash = bashTool({ killGraceMs: 300 });
const output = bashOutputTool();
const kill = killShellTool();

beforeAll(async () => {
  cwd = await tempDir('reloop-bg-');
});
afterAll(() => removeDir(cwd));

function runContext(toolUseId = 'toolu_bg') {
  const controller = new AbortController();
  const run = new RunResources('run_1', controller.signal);
  const ctx: ToolContext = { ...contextFor(cwd).ctx, toolUseId, run };
  return { ctx, run, controller };
}

function shellIdOf(text: string): string {
  const id = /with ID: (bash_[0-9a-f]+)/.exec(text)?.[1];
  if (!id) throw new Error(`no shell id in ${text}`);
  return id;
}

/** Reads until `until` shows up in stdout (or the shell stops running); what was read, joined. */
async function readUntil(ctx: ToolContext, id: string, until: RegExp): Promise<string> {
  let seen = '';
  for (let i = 0; i < 200; i++) {
    const text = textOf(await callTool(output, { bash_id: id }, ctx));
    seen += text;
    if (until.test(seen) || !text.includes('<status>running</status>')) return seen;
    await new Promise((r) => setTimeout(r, 25));
  }
  return seen;
}

describe('background shells (Bash run_in_background, BashOutput, KillShell)', () => {
  it('starts a command, returns at once, and BashOutput gives only new output each time', async () => {
    const { ctx, run } = runContext();
    const started = await callTool(
      bash,
      { command: 'echo one; echo err >&2; sleep 0.3; echo two; exit 4', run_in_background: true },
      ctx,
    );
    expect(started.isError).toBeFalsy();
    const id = shellIdOf(textOf(started));
    const first = await readUntil(ctx, id, /one/);
    expect(first).toContain('one');
    const rest = await readUntil(ctx, id, /two/);
    expect(rest).toContain('two');
    expect(rest).not.toMatch(/<stdout>\none/);
    // Once it exited: status failed (exit 4), with the code.
    let final = '';
    for (let i = 0; i < 100 && !final.includes('<exit_code>'); i++) {
      final = textOf(await callTool(output, { bash_id: id }, ctx));
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(final).toContain('<status>failed</status>');
    expect(final).toContain('<exit_code>4</exit_code>');
    await run.end();
  });

  it('filters lines by a regular expression; a bad one is an error result', async () => {
    const { ctx, run } = runContext('toolu_filter');
    const id = shellIdOf(
      textOf(await callTool(bash, { command: 'printf "a1\\nb2\\na3\\n"', run_in_background: true }, ctx)),
    );
    const shell = BackgroundShells.of(ctx.run!).get(id)!;
    await shell.exited;
    const text = textOf(await callTool(output, { bash_id: id, filter: '^a' }, ctx));
    expect(text).toContain('<stdout>\na1\na3\n</stdout>');
    expect(text).not.toContain('b2');
    const bad = await callTool(output, { bash_id: id, filter: '(' }, ctx);
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/^Invalid filter regular expression/);
    await run.end();
  });

  it('KillShell kills the whole process group; a second kill says it is not running', async () => {
    const { ctx, run } = runContext('toolu_kill');
    const id = shellIdOf(
      textOf(await callTool(bash, { command: 'sleep 60 & sleep 60', run_in_background: true }, ctx)),
    );
    const pid = BackgroundShells.of(ctx.run!).get(id)!.pid!;
    expect(processGroupAlive(pid)).toBe(true);
    const killed = await callTool(kill, { shell_id: id }, ctx);
    expect(textOf(killed)).toBe(`Killed shell ${id} (sleep 60 & sleep 60) and every process it started.`);
    expect(processGroupAlive(pid)).toBe(false);
    expect(textOf(await callTool(kill, { shell_id: id }, ctx))).toBe(
      `Shell ${id} is not running (killed: killed by KillShell); nothing to kill.`,
    );
    expect(textOf(await callTool(output, { bash_id: id }, ctx))).toContain('<status>killed</status>');
    await run.end();
  });

  it('the run end and the run abort kill every shell still running', async () => {
    const a = runContext('toolu_end');
    const endId = shellIdOf(
      textOf(await callTool(bash, { command: 'sleep 60', run_in_background: true }, a.ctx)),
    );
    const endPid = BackgroundShells.of(a.run).get(endId)!.pid!;
    await a.run.end();
    expect(processGroupAlive(endPid)).toBe(false);

    const b = runContext('toolu_abort');
    const abortId = shellIdOf(
      textOf(await callTool(bash, { command: 'sleep 60', run_in_background: true }, b.ctx)),
    );
    const shell = BackgroundShells.of(b.run).get(abortId)!;
    b.controller.abort();
    await shell.exited;
    expect(processGroupAlive(shell.pid!)).toBe(false);
    expect(shell.status).toBe('killed');
    await b.run.end();
  });

  it('a shell of another run (or one gone with a crash) is a clear error naming the shells there are', async () => {
    const { ctx, run } = runContext('toolu_other');
    const out = await callTool(output, { bash_id: 'bash_0000000' }, ctx);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toContain('No background shell "bash_0000000" in this run');
    expect(textOf(out)).toContain('after a crash and resume they are gone');
    expect(textOf(out)).toContain('This run has started none.');
    const k = await callTool(kill, { shell_id: 'bash_0000000' }, ctx);
    expect(k.isError).toBe(true);
    await run.end();
  });

  it('without a run (a re-run on resume) run_in_background is refused', async () => {
    const { ctx } = contextFor(cwd);
    const out = await callTool(bash, { command: 'true', run_in_background: true }, ctx);
    expect(out.isError).toBe(true);
    expect(textOf(out)).toMatch(/^run_in_background is not available here/);
  });

  it('keeps unread output up to the cap and hands it out in reads of at most 30 000 characters', async () => {
    const { ctx, run } = runContext('toolu_big');
    const id = shellIdOf(
      textOf(
        await callTool(
          bash,
          { command: "head -c 70000 /dev/zero | tr '\\0' x", run_in_background: true },
          ctx,
        ),
      ),
    );
    await BackgroundShells.of(ctx.run!).get(id)!.exited;
    // The pipe may still hold the last bytes after exit: read until all 70 000 arrived.
    let total = 0;
    let notes = '';
    for (let i = 0; i < 50 && total < 70_000; i++) {
      const text = textOf(await callTool(output, { bash_id: id }, ctx));
      total += (/<stdout>\n(x*)/.exec(text)?.[1] ?? '').length;
      notes += text;
      if (total < 70_000) await new Promise((r) => setTimeout(r, 20));
    }
    expect(total).toBe(70_000);
    expect(notes).toMatch(/more characters waiting: call BashOutput again/);
    await run.end();
  });
});
