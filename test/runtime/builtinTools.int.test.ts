import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import { Session } from '../../src/runtime/session.ts';
import { builtinTools } from '../../src/tools/builtin/index.ts';
import { scriptedSession, textTurn, toolTurn } from '../support/harness.ts';

const todos = [
  { content: 'Read the code', status: 'completed', activeForm: 'Reading the code' },
  { content: 'Run the tests', status: 'in_progress', activeForm: 'Running the tests' },
];

describe('the tools Claude Code models expect, in a session', () => {
  it('TodoWrite: the list is session state folded from the log, kept by reopen, and verify passes', async () => {
    const h = await scriptedSession(
      [
        toolTurn([{ name: 'TodoWrite', input: { todos: [{ ...todos[0], status: 'pending' }] }, id: 'tw1' }]),
        toolTurn([{ name: 'TodoWrite', input: { todos }, id: 'tw2' }]),
        // A bad list is refused and leaves the list as it was.
        toolTurn([{ name: 'TodoWrite', input: { todos: [{ content: 'x', status: 'doing' }] }, id: 'tw3' }]),
        textTurn('done'),
      ],
      { tools: builtinTools() },
    );
    const res = await h.session.submit('plan it');
    expect(res.status).toBe('completed');
    expect(h.session.state.todos?.items).toEqual(todos);
    const records = await h.records();
    const finished = records.find((r) => r.type === 'tool.finished' && r.data.toolUseId === 'tw2');
    expect(h.session.state.todos?.seq).toBe(finished?.seq);
    const reopened = await Session.open(h.session.id, { store: h.store, model: h.client });
    expect(reopened.state.todos?.items).toEqual(todos);
    expect((await verifyReplay(records)).ok).toBe(true);
  });

  it('a background shell lives as long as its run: BashOutput reads it, the run end kills it', async () => {
    // The shell id is a hash of the call that started it: known before the run.
    const id = `bash_${createHash('sha256').update('bg1').digest('hex').slice(0, 7)}`;
    const h = await scriptedSession(
      [
        toolTurn([
          { name: 'Bash', input: { command: 'echo ready; sleep 60', run_in_background: true }, id: 'bg1' },
        ]),
        toolTurn([{ name: 'Bash', input: { command: 'sleep 0.3' }, id: 'wait' }]),
        toolTurn([{ name: 'BashOutput', input: { bash_id: id }, id: 'out1' }]),
        textTurn('done'),
      ],
      { tools: builtinTools({ bash: { killGraceMs: 200 } }) },
    );
    const res = await h.session.submit('start it');
    expect(res.status).toBe('completed');
    const records = await h.records();
    const result = (toolUseId: string) =>
      records.find((r) => r.type === 'tool.finished' && r.data.toolUseId === toolUseId)?.data as
        | { result: { content: string } }
        | undefined;
    expect(result('bg1')?.result.content).toMatch(
      new RegExp(`^Command running in background with ID: ${id}\\.`),
    );
    expect(result('out1')?.result.content).toContain('<status>running</status>');
    expect(result('out1')?.result.content).toContain('ready');
    // Every sleep 60 of the run is gone: the run end killed its group.
    const left = execFileSync('bash', ['-c', 'pgrep -f "echo ready; sleep 6[0]" || true'], {
      encoding: 'utf8',
    });
    expect(left.trim()).toBe('');
    expect((await verifyReplay(records)).ok).toBe(true);
  });
});
