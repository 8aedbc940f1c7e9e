import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.ts';
import { scriptedRun } from '../support/scriptedRun.ts';
import { removeDir, tempDir } from '../tools/toolHarness.ts';

/**
 * Item 3: the runtime's credentials never reach a child process by default, and never reach the
 * log in any form — even when a child digs them out of the runtime's own /proc/<pid>/environ.
 */

let root: string;
let proj: string;
let work: string;
const API_KEY = `sk-ant-api03-${'Zq9'.repeat(30)}-test`;
// Characters that URL-encoding changes, so the encoded form differs from the raw one.
const AUTH_TOKEN = 'tok/with+special=chars&more?x=1#frag';
const env = { ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_AUTH_TOKEN: AUTH_TOKEN };

beforeAll(async () => {
  root = await tempDir('reloop-secrets-');
  proj = path.join(root, 'proj');
  work = path.join(root, 'work');
  await mkdir(proj);
});
afterAll(() => removeDir(root));

/** Every form of a value the log must not hold. */
function forms(value: string): string[] {
  const out = [value, encodeURIComponent(value)];
  // base64 at each alignment inside a longer encoded string, inner characters only
  const bytes = Buffer.from(value);
  for (let k = 0; k < 3; k++) {
    const b64 = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    out.push(b64.slice(Math.ceil((8 * k) / 6), Math.floor((8 * (k + bytes.length)) / 6)));
  }
  return out;
}

// `$PPID` of a Bash call or a hook is the reloop process itself: its environ still holds the key.
const PEEK = 'tr "\\0" "\\n" < /proc/$PPID/environ | grep ^ANTHROPIC_';
const PEEK_B64 = 'tr "\\0" "\\n" < /proc/$PPID/environ | grep ^ANTHROPIC_ | base64 -w0';
const PEEK_URL = `node -e 'const e=require("fs").readFileSync("/proc/"+process.argv[1]+"/environ","utf8");process.stdout.write(encodeURIComponent(e))' $PPID`;
const STOP_HOOK = `if grep -q '"stop_hook_active":true'; then exit 0; fi; ${PEEK} >&2; exit 2`;

describe('secrets (item 3)', () => {
  it('Bash and hooks do not inherit the credentials; what they dig out is redacted from every record', async () => {
    const run = await scriptedRun(
      [
        [
          { name: 'Bash', input: { command: 'env' } },
          { name: 'Bash', input: { command: PEEK } },
          { name: 'Bash', input: { command: PEEK_B64 } },
          { name: 'Bash', input: { command: PEEK_URL } },
          {
            name: 'Bash',
            input: { command: 'echo "key=[$ANTHROPIC_API_KEY] token=[$ANTHROPIC_AUTH_TOKEN]"' },
          },
        ],
      ],
      {
        cwd: proj,
        work,
        env,
        args: ['--permission-mode', 'bypassPermissions', '--stop-hook', STOP_HOOK],
      },
    );
    expect(run.status, run.cli.stderr).toBe('completed');
    // Not in the children's environment at all:
    expect(run.result('t0_0').content).not.toMatch(/ANTHROPIC_(API_KEY|AUTH_TOKEN)=/);
    expect(run.result('t0_4').content).toContain('key=[] token=[]');
    // Dug out of /proc: the tool saw it, the log holds a mask of the same length.
    expect(run.result('t0_1').content).toContain('ANTHROPIC_API_KEY=[REDACTED:ANTHROPIC_API_KEY]');
    const hook = run.records.find((r) => r.type === 'hook.decided' && r.data.hook === 'Stop');
    expect(hook?.data.decision).toBe('block');
    expect(String(hook?.data.reason)).toContain('[REDACTED:ANTHROPIC_API_KEY]');
    for (const f of [...forms(API_KEY), ...forms(AUTH_TOKEN)]) expect(run.logText).not.toContain(f);

    // The redacted log still replays and verifies: live and replay saw the same masked facts.
    const verify = await runCli(
      ['replay', run.sessionId, '--verify', '--store', path.join(work, 'store'), '--json'],
      { cwd: work },
    );
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });

  it('--pass-env lets a named credential through to the children, still redacted from the log', async () => {
    const run = await scriptedRun([[{ name: 'Bash', input: { command: 'env | grep ^ANTHROPIC_ | sort' } }]], {
      cwd: proj,
      work,
      env,
      args: ['--permission-mode', 'bypassPermissions', '--pass-env', 'ANTHROPIC_API_KEY'],
    });
    const out = run.result('t0_0').content;
    expect(out).toContain('ANTHROPIC_API_KEY=[REDACTED:ANTHROPIC_API_KEY]');
    expect(out).not.toContain('ANTHROPIC_AUTH_TOKEN');
    for (const f of forms(API_KEY)) expect(run.logText).not.toContain(f);
  });

  it('--pass-env takes a variable name', async () => {
    const r = await runCli(['run', '--script', 'x.json', '--pass-env', 'A B', 'hi'], { cwd: work });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--pass-env takes a variable name/);
  });
});
