/**
 * CLAUDE.md memory through `reloop run`, against a loopback Messages API: what the model received
 * (in front of the first user turn, in every request of the run), the `memory.loaded` fact in the
 * log, warnings on stderr, and a replay that verifies after the files changed or went away.
 */
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRecord } from '../../src/store/records.ts';
import { jsonLines, onlyJson, runCli } from '../support/cli.ts';
import {
  type MessagesServer,
  startMessagesServer,
  textReply,
  toolUseReply,
} from '../support/messagesServer.ts';

const SLOW = 90_000;
let root: string;
let project: string;
let home: string;
let server: MessagesServer;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-cli-memory-'));
  project = path.join(root, 'project');
  home = path.join(root, 'home');
  await mkdir(path.join(project, '.git'), { recursive: true });
  await mkdir(path.join(project, 'docs'), { recursive: true });
  await mkdir(path.join(home, '.claude'), { recursive: true });
  await writeFile(path.join(project, 'CLAUDE.md'), '# Project\nUse pnpm. See @docs/conventions.md\n');
  await writeFile(path.join(project, 'docs', 'conventions.md'), 'Tabs, not spaces. @../CLAUDE.md\n');
  await writeFile(path.join(project, 'CLAUDE.local.md'), 'My sandbox is at http://localhost:3000.\n');
  await writeFile(path.join(home, '.claude', 'CLAUDE.md'), 'Answer briefly.\n');
  await writeFile(path.join(project, 'notes.txt'), 'milk\n');
  server = await startMessagesServer();
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

type Block = { type: string; text?: string };
const firstTurn = (i: number) =>
  server.requests[i]?.body.messages?.[0] as { role: string; content: Block[] } | undefined;

describe('CLAUDE.md memory under reloop run', () => {
  it(
    'user, project (with its import) and local memory reach the model before the prompt, in every request; the log records them once; replay never reads them',
    async () => {
      server.enqueue(
        toolUseReply('Read', { file_path: 'notes.txt' }, { toolUseId: 'toolu_read_1' }),
        textReply('milk'),
      );
      const env = {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef',
        RELOOP_HOME: home,
      };
      const r = await runCli(['run', '--store', 'st', '--json', 'What is in notes.txt?'], {
        cwd: project,
        env,
      });
      expect(r.code, r.stderr).toBe(0);
      // The import back to CLAUDE.md is a cycle: refused, and said.
      const conventions = path.join(project, 'docs', 'conventions.md');
      expect(r.stderr.trim()).toBe(
        `warning: import @../CLAUDE.md in ${conventions}: an import cycle (${path.join(project, 'CLAUDE.md')} → ${conventions} → ${path.join(project, 'CLAUDE.md')}); not followed`,
      );

      expect(server.requests).toHaveLength(2);
      for (const i of [0, 1]) {
        const turn = firstTurn(i)!;
        expect(turn.role).toBe('user');
        expect(turn.content.map((b) => b.type)).toEqual(['text', 'text']);
        expect(turn.content[1]?.text).toBe('What is in notes.txt?');
        const memory = turn.content[0]!.text!;
        expect(memory.startsWith('<system-reminder>')).toBe(true);
        const order = [
          `Contents of ${path.join(home, '.claude', 'CLAUDE.md')} (user's private global instructions for all projects):\n\nAnswer briefly.`,
          `Contents of ${path.join(project, 'CLAUDE.md')} (project instructions, checked into the codebase):\n\n# Project\nUse pnpm. See @docs/conventions.md`,
          `Contents of ${conventions} (project instructions, checked into the codebase):\n\nTabs, not spaces. @../CLAUDE.md`,
          `Contents of ${path.join(project, 'CLAUDE.local.md')} (user's private project instructions, not checked in):\n\nMy sandbox is at http://localhost:3000.`,
        ].map((part) => memory.indexOf(part));
        expect(order.every((at) => at > 0)).toBe(true);
        expect([...order].sort((a, b) => a - b)).toEqual(order);
      }
      // The system prompt is left alone.
      expect(String(server.requests[0]?.body.system)).not.toContain('Use pnpm');

      const id = onlyJson<{ sessionId: string }>(r).sessionId;
      const log = jsonLines<LogRecord>(
        await readFile(path.join(project, 'st', 'sessions', `${id}.jsonl`), 'utf8'),
      );
      const loaded = log.filter((x) => x.type === 'memory.loaded');
      expect(loaded).toHaveLength(1);
      expect(loaded[0]?.type === 'memory.loaded' && loaded[0].data).toEqual({
        files: [
          { path: path.join(home, '.claude', 'CLAUDE.md'), source: 'user', content: 'Answer briefly.\n' },
          {
            path: path.join(project, 'CLAUDE.md'),
            source: 'project',
            content: '# Project\nUse pnpm. See @docs/conventions.md\n',
          },
          {
            path: conventions,
            source: 'project',
            content: 'Tabs, not spaces. @../CLAUDE.md\n',
            importedBy: path.join(project, 'CLAUDE.md'),
          },
          {
            path: path.join(project, 'CLAUDE.local.md'),
            source: 'local',
            content: 'My sandbox is at http://localhost:3000.\n',
          },
        ],
        warnings: [expect.stringContaining('an import cycle')],
      });
      const shown = await runCli(['log', id, '--store', 'st'], { cwd: project });
      expect(shown.stdout).toContain('memory: 4 files');

      // The files change and go away: the session still verifies, from the log alone.
      await writeFile(path.join(project, 'CLAUDE.md'), 'Use npm now.\n');
      await unlink(conventions);
      await unlink(path.join(home, '.claude', 'CLAUDE.md'));
      const verify = await runCli(['replay', id, '--verify', '--store', 'st'], { cwd: project });
      expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    },
    SLOW,
  );

  it(
    '--setting-sources picks the memory too: project alone reads neither the user\'s nor the local file; "" reads none',
    async () => {
      const dir = path.join(root, 'sources');
      const userHome = path.join(root, 'sources-home');
      await mkdir(path.join(dir, '.git'), { recursive: true });
      await mkdir(path.join(userHome, '.claude'), { recursive: true });
      await writeFile(path.join(dir, 'CLAUDE.md'), 'project rule\n');
      await writeFile(path.join(dir, 'CLAUDE.local.md'), 'local rule\n');
      await writeFile(path.join(userHome, '.claude', 'CLAUDE.md'), 'user rule\n');
      const env = {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef',
        RELOOP_HOME: userHome,
      };
      const filesOf = async (sources: string) => {
        server.requests.length = 0;
        server.enqueue(textReply('ok'));
        const r = await runCli(['run', '--store', 'st', '--json', '--setting-sources', sources, 'hi'], {
          cwd: dir,
          env,
        });
        expect(r.code, r.stderr).toBe(0);
        const id = onlyJson<{ sessionId: string }>(r).sessionId;
        const log = jsonLines<LogRecord>(
          await readFile(path.join(dir, 'st', 'sessions', `${id}.jsonl`), 'utf8'),
        );
        const m = log.find((x) => x.type === 'memory.loaded');
        return m?.type === 'memory.loaded' ? (m.data.files ?? []).map((f) => f.source) : [];
      };
      expect(await filesOf('project')).toEqual(['project']);
      expect(await filesOf('user,local')).toEqual(['user', 'local']);
      expect(await filesOf('')).toEqual([]);
      expect(server.requests[0]?.body.messages?.[0]).toEqual({ role: 'user', content: 'hi' });
    },
    SLOW,
  );

  it(
    'no CLAUDE.md anywhere: the request is the prompt alone and the log has no memory record',
    async () => {
      const bare = path.join(root, 'bare');
      await mkdir(bare);
      server.requests.length = 0;
      server.enqueue(textReply('hi'));
      const env = {
        ANTHROPIC_BASE_URL: server.url,
        ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdef',
        RELOOP_HOME: path.join(root, 'empty-home'),
      };
      const r = await runCli(['run', '--store', 'st', '--json', 'hello'], { cwd: bare, env });
      expect(r.code, r.stderr).toBe(0);
      expect(server.requests[0]?.body.messages?.[0]).toEqual({ role: 'user', content: 'hello' });
      const id = onlyJson<{ sessionId: string }>(r).sessionId;
      const log = await readFile(path.join(bare, 'st', 'sessions', `${id}.jsonl`), 'utf8');
      expect(log).not.toContain('memory.loaded');
    },
    SLOW,
  );
});
