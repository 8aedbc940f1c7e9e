import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadMemory, type MemorySource, memoryContext, withMemory } from '../../src/memory/index.ts';

let root: string;
let repo: string;
let home: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-memory-'));
  repo = path.join(root, 'repo');
  home = path.join(root, 'home');
  await mkdir(path.join(repo, '.git'), { recursive: true });
  await mkdir(path.join(home, '.claude'), { recursive: true });
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function put(file: string, text: string) {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, text);
}

const load = (cwd: string, sources: readonly MemorySource[] = ['user', 'project', 'local']) =>
  loadMemory({ cwd, sources, userDir: path.join(home, '.claude'), home });

describe('loadMemory: CLAUDE.md as Claude Code finds it', () => {
  it('user first, then from the repository root down to cwd: CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md', async () => {
    const cwd = path.join(repo, 'packages', 'api');
    await put(path.join(root, 'CLAUDE.md'), 'above the repository: never read');
    await put(path.join(home, '.claude', 'CLAUDE.md'), 'user');
    await put(path.join(repo, 'CLAUDE.md'), 'repo');
    await put(path.join(repo, 'CLAUDE.local.md'), 'repo local');
    await put(path.join(repo, 'packages', 'web', 'CLAUDE.md'), 'a sibling: never read');
    await put(path.join(cwd, '.claude', 'CLAUDE.md'), 'api dot-claude');
    await put(path.join(cwd, 'CLAUDE.md'), 'api');
    const m = await load(cwd);
    expect(m.files.map((f) => [path.relative(root, f.path), f.source, f.content])).toEqual([
      ['home/.claude/CLAUDE.md', 'user', 'user'],
      ['repo/CLAUDE.md', 'project', 'repo'],
      ['repo/CLAUDE.local.md', 'local', 'repo local'],
      ['repo/packages/api/CLAUDE.md', 'project', 'api'],
      ['repo/packages/api/.claude/CLAUDE.md', 'project', 'api dot-claude'],
    ]);
    expect(m.warnings).toEqual([]);
    expect((await load(cwd, ['project'])).files.map((f) => f.content)).toEqual([
      'repo',
      'api',
      'api dot-claude',
    ]);
    expect((await load(cwd, ['local'])).files.map((f) => f.content)).toEqual(['repo local']);
    expect((await loadMemory({ cwd, sources: [] })).files).toEqual([]);
  });

  it('outside a repository only the working directory is read', async () => {
    const plain = path.join(root, 'plain', 'sub');
    await put(path.join(root, 'plain', 'CLAUDE.md'), 'parent');
    await put(path.join(plain, 'CLAUDE.md'), 'here');
    expect((await load(plain, ['project'])).files.map((f) => f.content)).toEqual(['here']);
  });

  it('imports follow the file that imports them: relative to it, ~/ from the home, five deep', async () => {
    await put(path.join(repo, 'CLAUDE.md'), 'Read @docs/a.md and `@not/this.md`.');
    for (let i = 1; i <= 6; i++) {
      const name = String.fromCharCode(96 + i); // a … f
      const next = String.fromCharCode(97 + i);
      await put(path.join(repo, 'docs', `${name}.md`), i < 6 ? `${name} then @${next}.md` : 'f');
    }
    await put(path.join(home, '.claude', 'CLAUDE.md'), 'mine: @~/notes/style.md');
    await put(path.join(home, 'notes', 'style.md'), 'tabs');
    const m = await load(repo);
    expect(
      m.files.map((f) => [path.relative(root, f.path), f.importedBy && path.relative(root, f.importedBy)]),
    ).toEqual([
      ['home/.claude/CLAUDE.md', undefined],
      ['home/notes/style.md', 'home/.claude/CLAUDE.md'],
      ['repo/CLAUDE.md', undefined],
      ['repo/docs/a.md', 'repo/CLAUDE.md'],
      ['repo/docs/b.md', 'repo/docs/a.md'],
      ['repo/docs/c.md', 'repo/docs/b.md'],
      ['repo/docs/d.md', 'repo/docs/c.md'],
      ['repo/docs/e.md', 'repo/docs/d.md'],
    ]);
    expect(m.files[1]?.source).toBe('user');
    expect(m.files[4]?.source).toBe('project');
    expect(m.warnings).toEqual([
      `import @f.md in ${path.join(repo, 'docs', 'e.md')}: imports nest more than 5 deep; not read`,
    ]);
  });

  it('a cycle is refused with a warning; a file imported twice is read once', async () => {
    await put(path.join(repo, 'CLAUDE.md'), '@a.md @b.md');
    await put(path.join(repo, 'a.md'), 'a: @b.md');
    await put(path.join(repo, 'b.md'), 'b: @a.md');
    const m = await load(repo, ['project']);
    expect(m.files.map((f) => path.basename(f.path))).toEqual(['CLAUDE.md', 'a.md', 'b.md']);
    const [c, a, b] = ['CLAUDE.md', 'a.md', 'b.md'].map((n) => path.join(repo, n));
    expect(m.warnings).toEqual([
      `import @a.md in ${b}: an import cycle (${c} → ${a} → ${b} → ${a}); not followed`,
    ]);
  });

  it('a checkout cannot choose what of the machine the model sees: imports and symlinks out of the repository are not read', async () => {
    await put(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY');
    await put(path.join(repo, 'CLAUDE.md'), 'Keys: @~/.ssh/id_rsa @../outside.md @missing/file.md @alice');
    await put(path.join(root, 'outside.md'), 'outside');
    await mkdir(path.join(repo, 'sub', '.claude'), { recursive: true });
    await symlink(path.join(home, '.ssh', 'id_rsa'), path.join(repo, 'sub', '.claude', 'CLAUDE.md'));
    const m = await load(path.join(repo, 'sub'), ['project']);
    expect(m.files.map((f) => f.content)).toEqual([
      'Keys: @~/.ssh/id_rsa @../outside.md @missing/file.md @alice',
    ]);
    const claude = path.join(repo, 'CLAUDE.md');
    expect(m.warnings).toEqual([
      `import @~/.ssh/id_rsa in ${claude}: ${path.join(home, '.ssh', 'id_rsa')} is outside the repository ${repo}; not read`,
      `import @../outside.md in ${claude}: ${path.join(root, 'outside.md')} is outside the repository ${repo}; not read`,
      `import @missing/file.md in ${claude}: no such file; not read`,
      `memory file ${path.join(repo, 'sub', '.claude', 'CLAUDE.md')}: ${path.join(home, '.ssh', 'id_rsa')} is outside the repository ${repo}; not read`,
    ]);
  });

  it('placed as Claude Code places it: a reminder block in front of the first user turn', async () => {
    await put(path.join(repo, 'CLAUDE.md'), 'Use pnpm.\n');
    await put(path.join(home, '.claude', 'CLAUDE.md'), 'Be brief.');
    const context = memoryContext((await load(repo)).files)!;
    expect(context).toContain(
      `Contents of ${path.join(home, '.claude', 'CLAUDE.md')} (user's private global instructions for all projects):\n\nBe brief.`,
    );
    expect(context).toContain(
      `Contents of ${path.join(repo, 'CLAUDE.md')} (project instructions, checked into the codebase):\n\nUse pnpm.`,
    );
    expect(context.indexOf('Be brief.')).toBeLessThan(context.indexOf('Use pnpm.'));
    expect(context.startsWith('<system-reminder>\n')).toBe(true);
    const messages = withMemory(
      [
        { role: 'user', content: 'fix the test' },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      ],
      context,
    );
    expect(messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: context },
        { type: 'text', text: 'fix the test' },
      ],
    });
    expect(messages[1]).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'ok' }] });
    expect(memoryContext([{ path: '/x', source: 'project', content: '  \n' }])).toBeNull();
  });
});
