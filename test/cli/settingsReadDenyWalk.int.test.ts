/**
 * A Read deny (or ask) rule of the settings files covers what Grep and Glob meet while walking a
 * tree, not only the `path` the policy checks: a search over `.` never opens, lists or names a
 * file under `secrets/`, and says how many paths were withheld. The real CLI against the loopback
 * Messages API; each case reads the tool results the model was sent.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type CliResult, runCli } from '../support/cli.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const SLOW = 120_000;

let root: string;
let server: MessagesServer;
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-read-deny-walk-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});
beforeEach(async () => {
  server = await startMessagesServer({ apiKey: 'sk-test' });
});
afterEach(async () => {
  expect(server.pending()).toBe(0);
  await server.close();
});

let n = 0;
async function project(permissions: Record<string, string[]>): Promise<string> {
  const dir = path.join(root, `p${++n}`);
  await mkdir(path.join(dir, '.claude'), { recursive: true });
  await mkdir(path.join(dir, 'secrets', 'deep'), { recursive: true });
  await writeFile(path.join(dir, 'secrets', 'key.txt'), 'THE-SECRET-VALUE');
  await writeFile(path.join(dir, 'secrets', 'deep', 'hidden.txt'), 'ALSO-SECRET-VALUE');
  await writeFile(path.join(dir, 'notes.txt'), 'plain VALUE notes');
  await writeFile(path.join(dir, '.claude', 'settings.json'), JSON.stringify({ permissions }));
  return dir;
}

async function run(cwd: string, flags: string[] = []): Promise<CliResult> {
  return runCli(
    [
      'run',
      '--model',
      'claude-sonnet-4-6',
      '--store',
      'st',
      '--json',
      '--on-ask',
      'deny',
      ...flags,
      'Search.',
    ],
    { cwd, env: { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: 'sk-test' }, timeoutMs: SLOW },
  );
}

/** Grep over `.` for a pattern the secrets match, then Glob `**\/*`, then a closing text. */
function searchCalls() {
  server.enqueue(
    toolUseReply('Grep', { pattern: 'VALUE', path: '.', output_mode: 'content' }, { toolUseId: 'toolu_1' }),
    toolUseReply('Glob', { pattern: '**/*' }, { toolUseId: 'toolu_2' }),
    textReply('Done.'),
  );
}

/** The tool_result texts the model was sent, by tool_use id. */
function results(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const q of server.requests) {
    for (const m of q.body.messages as { role: string; content: unknown }[]) {
      if (!Array.isArray(m.content)) continue;
      for (const b of m.content as { type: string; tool_use_id?: string; content?: unknown }[]) {
        if (b.type === 'tool_result' && b.tool_use_id) out[b.tool_use_id] = JSON.stringify(b.content);
      }
    }
  }
  return out;
}

describe('Grep and Glob over a tree skip what a Read rule withholds', () => {
  it(
    'deny Read(./secrets/**): the secrets are neither matched nor listed; other files still are',
    async () => {
      const cwd = await project({ deny: ['Read(./secrets/**)'] });
      searchCalls();
      const r = await run(cwd);
      expect(r.code, r.stderr).toBe(0);
      const { toolu_1: grep = '', toolu_2: glob = '' } = results();
      const sent = JSON.stringify(server.requests.map((q) => q.body.messages));
      for (const leak of ['SECRET', 'key.txt', 'hidden.txt', 'secrets/']) expect(sent).not.toContain(leak);
      expect(grep).toContain('notes.txt:1:plain VALUE notes');
      expect(grep).toContain('[2 paths withheld by permission rules]');
      expect(glob).toContain('notes.txt');
      expect(glob).toContain('[2 paths withheld by permission rules]');
    },
    SLOW,
  );

  it(
    'ask Read(./secrets/**): the search is not asked about, and the covered files are withheld (fail closed)',
    async () => {
      const cwd = await project({ ask: ['Read(./secrets/**)'] });
      searchCalls();
      const r = await run(cwd);
      expect(r.code, r.stderr).toBe(0);
      const { toolu_1: grep = '', toolu_2: glob = '' } = results();
      expect(grep + glob).not.toContain('SECRET');
      expect(grep + glob).not.toContain('secrets/');
      expect(grep).toContain('notes.txt:1:plain VALUE notes');
      expect(grep).toContain('[2 paths withheld by permission rules]');
      expect(glob).toContain('[2 paths withheld by permission rules]');
    },
    SLOW,
  );

  it(
    'without the rules (--setting-sources "" reads no file) nothing is withheld',
    async () => {
      const cwd = await project({ deny: ['Read(./secrets/**)'] });
      searchCalls();
      const r = await run(cwd, ['--setting-sources', '']);
      expect(r.code, r.stderr).toBe(0);
      const { toolu_1: grep = '', toolu_2: glob = '' } = results();
      expect(grep).toContain('secrets/key.txt:1:THE-SECRET-VALUE');
      expect(grep).toContain('secrets/deep/hidden.txt:1:ALSO-SECRET-VALUE');
      expect(glob).toContain('secrets/key.txt');
      expect(grep + glob).not.toContain('withheld');
    },
    SLOW,
  );
});
