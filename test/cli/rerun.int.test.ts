import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onlyJson, runCli } from '../support/cli.ts';

let cwd: string;
let store: string;
let sessionId: string;

beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-rerun-cli-'));
  store = path.join(cwd, '.st');
  await writeFile(path.join(cwd, 'notes.txt'), 'remember the milk\n');
  const script = path.join(cwd, 's.json');
  await writeFile(
    script,
    JSON.stringify({
      turns: [
        {
          content: [{ type: 'tool_use', id: 'r1', name: 'Read', input: { file_path: 'notes.txt' } }],
          stop_reason: 'tool_use',
        },
        { text: 'It says to remember the milk.' },
      ],
    }),
  );
  const run = await runCli(
    ['run', '--script', script, '--store', store, '--allow', 'Read', '--json', 'read notes.txt'],
    { cwd },
  );
  expect(run.code, run.stderr).toBe(0);
  sessionId = onlyJson<{ sessionId: string }>(run).sessionId;
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

describe('reloop replay --rerun', () => {
  it('a CLI session reruns identical with --tools recorded (and live, in a scratch copy)', async () => {
    for (const tools of ['recorded', 'live']) {
      const r = await runCli(
        ['replay', sessionId, '--rerun', '--tools', tools, '--allow', 'Read', '--store', store, '--json'],
        { cwd },
      );
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(onlyJson(r)).toEqual({ identical: true, divergence: null, turns: 2 });
    }
  });

  it('a changed rule is a permission divergence, exit 1; the text names seq, kind and path', async () => {
    const r = await runCli(
      [
        'replay',
        sessionId,
        '--rerun',
        '--tools',
        'recorded',
        '--deny',
        'Read(notes.txt)',
        '--store',
        store,
        '--json',
      ],
      { cwd },
    );
    expect(r.code).toBe(1);
    const out = onlyJson<{ identical: boolean; divergence: { kind: string; seq: number; path: string } }>(r);
    expect(Object.keys(out).sort()).toEqual(['divergence', 'identical', 'turns']);
    expect(out.divergence).toMatchObject({ kind: 'permission', path: 'decision' });
    const text = await runCli(
      ['replay', sessionId, '--rerun', '--tools', 'recorded', '--deny', 'Read(notes.txt)', '--store', store],
      { cwd },
    );
    expect(text.stdout).toContain(`DIVERGED at seq ${out.divergence.seq} (permission decision)`);
  });

  it('--all over the store: one line per session and a summary', async () => {
    const r = await runCli(
      ['replay', '--all', '--rerun', '--tools', 'recorded', '--allow', 'Read', '--store', store],
      { cwd },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${sessionId}: identical`);
    expect(r.stdout).toContain('ok: 1 session rerun identically');
    const v = await runCli(['replay', '--all', '--verify', '--store', store], { cwd });
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toContain('ok: 1 session replay identically');
  });

  it('run --resume with another setup is refused (SETUP_CHANGED) unless --accept-setup-change', async () => {
    const script = path.join(cwd, 's2.json');
    await writeFile(script, JSON.stringify({ turns: [{ text: 'ok' }] }));
    const refused = await runCli(
      ['run', '--resume', sessionId, '--script', script, '--store', store, '--deny', 'Read', 'more'],
      { cwd },
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/permission rules differ.*\[SETUP_CHANGED\]/);
    const accepted = await runCli(
      [
        'run',
        '--resume',
        sessionId,
        '--script',
        script,
        '--store',
        store,
        '--deny',
        'Read',
        '--accept-setup-change',
        '--json',
        'more',
      ],
      { cwd },
    );
    expect(accepted.code, accepted.stderr).toBe(0);
  });
  it('--all goes on past a session it cannot rerun (its directory is gone): a failed line, exit 1', async () => {
    const other = path.join(cwd, '.st-all');
    const script = path.join(cwd, 's3.json');
    await writeFile(script, JSON.stringify({ turns: [{ text: 'fine' }] }));
    const ids: string[] = [];
    for (const dir of ['kept', 'gone']) {
      const where = path.join(cwd, dir);
      await mkdir(where);
      const r = await runCli(['run', '--script', script, '--store', other, '--json', 'hello'], {
        cwd: where,
      });
      expect(r.code, r.stderr).toBe(0);
      ids.push(onlyJson<{ sessionId: string }>(r).sessionId);
    }
    await rm(path.join(cwd, 'gone'), { recursive: true, force: true });
    const r = await runCli(['replay', '--all', '--rerun', '--tools', 'recorded', '--store', other], { cwd });
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(`${ids[0]}: identical`);
    expect(r.stdout).toMatch(new RegExp(`${ids[1]}: cannot rerun: .*no such directory`));
    expect(r.stdout).toContain('DIVERGED: 1 of 2 sessions');
    const json = await runCli(
      ['replay', '--all', '--rerun', '--tools', 'recorded', '--store', other, '--json'],
      {
        cwd,
      },
    );
    const report = onlyJson<{ ok: boolean; sessions: { session: string; ok: boolean; error?: string }[] }>(
      json,
    );
    expect(report.ok).toBe(false);
    expect(report.sessions.find((l) => l.session === ids[1])?.error).toMatch(/no such directory/);
  });
});
