/**
 * `reloop import` as a user runs it (child processes on a real file store), and every other
 * command on what it imported: log, viz (diagrams and the viewer), coverage, replay --verify,
 * fork, and run --resume continuing an imported session with a scripted model.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import parseDot from 'dotparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES, SID, transcriptFile } from '../import/support/fixtures.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';
import { pageText } from '../viz/pageData.ts';

const SLOW = 120_000;
let root: string;
let store: string;
const cli = (...args: string[]) => runCli(args, { cwd: root, timeoutMs: SLOW });
const TOOLS = `cc-${SID.tools}`;

interface JsonSession {
  sessionId: string;
  source: string;
  records: number;
  transitions: number;
  unmapped: number;
  children: JsonSession[];
}

let firstImport: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-import-cli-'));
  store = path.join(root, 'store');
  firstImport = await cli('import', FIXTURES, '--store', store, '--json');
}, SLOW);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('reloop import', () => {
  it('prints exactly { sessions: [{ sessionId, source, records, transitions, unmapped, children }] }', () => {
    const { sessions } = onlyJson<{ sessions: JsonSession[] }>(firstImport);
    expect(sessions).toHaveLength(Object.keys(SID).length);
    const keys = (s: JsonSession): void => {
      expect(Object.keys(s)).toEqual([
        'sessionId',
        'source',
        'records',
        'transitions',
        'unmapped',
        'children',
      ]);
      s.children.forEach(keys);
    };
    sessions.forEach(keys);
    const tools = sessions.find((s) => s.sessionId === TOOLS)!;
    expect(tools).toMatchObject({ source: transcriptFile(SID.tools), unmapped: 0, children: [] });
    expect(tools.records).toBeGreaterThan(40);
    expect(sessions.find((s) => s.sessionId === `cc-${SID.subagents}`)!.children).toHaveLength(4);
  });

  it('exits 1 when lines were not mapped, naming each malformed line by file and line', () => {
    expect(firstImport.code).toBe(1);
    const file = transcriptFile(SID.malformed);
    expect(firstImport.stderr).toContain(`warning: ${file} line 3: not valid JSON`);
    expect(firstImport.stderr).toContain(
      `warning: ${file} line 4: not a JSON object; kept as import.unmapped`,
    );
  });

  it(
    'keeps what it imported when run again, and exits 0 when every line was mapped',
    async () => {
      const again = await cli('import', transcriptFile(SID.tools), '--store', store);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain(`kept      ${TOOLS} ← ${transcriptFile(SID.tools)}: imported before`);
      expect(again.stdout).toContain('1 transcript: 0 imported, 1 kept; 0 lines not mapped');
    },
    SLOW,
  );

  it(
    'exits 2 for a path that names nothing',
    async () => {
      const r = await cli('import', path.join(root, 'nope'), '--store', store);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`reloop: ${path.join(root, 'nope')}: no such file or folder [IMPORT_PATH]\n`);
    },
    SLOW,
  );
});

describe('everything else on imported sessions', () => {
  it(
    'log shows the records, with where they came from',
    async () => {
      const r = await cli('log', TOOLS, '--store', store);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`(imported from claude-code ${transcriptFile(SID.tools)})`);
      expect(r.stdout).toContain('requesting → dispatchingTools  [tool_use_requested]');
      const json = jsonLines<{ type: string }>((await cli('log', TOOLS, '--store', store, '--json')).stdout);
      expect(json[0]!.type).toBe('session.created');
    },
    SLOW,
  );

  it(
    'viz draws the edges an imported session took (Mermaid and DOT) and writes the viewer with its text, tools and tokens',
    async () => {
      const mmd = await cli('viz', TOOLS, '--store', store);
      expect(mmd.code, mmd.stderr).toBe(0);
      expect(mmd.stdout).toContain('dispatchingTools --> building : tool_result_continuation ×3\n');
      const dot = await cli('viz', TOOLS, '--store', store, '--format', 'dot');
      expect(() => parseDot(dot.stdout)).not.toThrow();
      expect(dot.stdout).toContain('label="tool_use_requested ×3"');
      const out = path.join(root, 'view.html');
      const html = await cli('viz', TOOLS, '--store', store, '--format', 'html', '--out', out);
      expect(html.code, html.stderr).toBe(0);
      // The page carries the log gzipped: read it as the page does.
      const page = pageText(await readFile(out, 'utf8'));
      expect(page).toContain('The test in sum.test.js fails. Fix it.');
      expect(page).toContain('Fixed: sum() subtracted instead of adding.');
      expect(page).toContain('/work/demo/sum.js');
      expect(page).toContain('"inputTokens":1200');
    },
    SLOW,
  );

  it(
    'coverage reports which reasons the imported sessions hit',
    async () => {
      const r = await cli('coverage', '--store', store, '--json');
      expect(r.code, r.stderr).toBe(0);
      const report = onlyJson<{ reasons: { covered: string[] } }>(r);
      const hit = new Set(report.reasons.covered);
      for (const reason of [
        'auto_compact',
        'transport_retry',
        'stop_hook_continuation',
        'aborted',
        'model_error',
      ])
        expect(hit, reason).toContain(reason);
    },
    SLOW,
  );

  it(
    'replay --verify checks an imported session for conformance',
    async () => {
      const r = await cli('replay', `cc-${SID.errors}`, '--store', store, '--verify');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^ok: 72 records, 25 transitions in 5 runs replay identically/);
    },
    SLOW,
  );

  it(
    'fork --at makes a native session that run --resume continues with a scripted model, and it verifies',
    async () => {
      const log = jsonLines<{ seq: number; type: string }>(
        (await cli('log', TOOLS, '--store', store, '--json')).stdout,
      );
      const at = log.at(-1)!.seq;
      const fork = onlyJson<{ sessionId: string }>(
        await cli('fork', TOOLS, '--at', String(at), '--store', store, '--json'),
      );
      const script = path.join(root, 'script.json');
      await writeFile(script, JSON.stringify({ turns: [{ text: 'Both tests pass now.' }] }));
      const run = await cli(
        'run',
        '--resume',
        fork.sessionId,
        'Check it again.',
        '--script',
        script,
        '--store',
        store,
      );
      expect(run.code, run.stderr + run.stdout).toBe(0);
      const verify = await cli('replay', fork.sessionId, '--store', store, '--verify', '--json');
      expect(onlyJson<{ ok: boolean }>(verify).ok).toBe(true);
      const original = await cli('replay', TOOLS, '--store', store, '--json');
      expect(onlyJson<{ seq: number }>(original).seq).toBe(at);
    },
    SLOW,
  );
});
