import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentDefinitionError, loadAgents, MAX_AGENT_FILE_BYTES } from '../../src/agents/index.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { Session } from '../../src/runtime/session.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { echoTool } from '../support/harness.ts';

let cwd: string;
beforeEach(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-agents-'));
});
afterEach(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const agent = (name: string, extra = '') =>
  `---\nname: ${name}\ndescription: The ${name} agent.\n${extra}---\nYou are ${name}.\n`;

describe('loadAgents', () => {
  it('built-in general-purpose, then .claude/agents, then --agents-dir (later wins)', async () => {
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    await writeFile(path.join(cwd, '.claude', 'agents', 'b.md'), agent('b'));
    await writeFile(path.join(cwd, '.claude', 'agents', 'notes.txt'), 'not an agent');
    const extra = path.join(cwd, 'more');
    await mkdir(extra);
    await writeFile(path.join(extra, 'b.md'), agent('b', 'tools: echo\n'));
    await writeFile(path.join(extra, 'general-purpose.md'), agent('general-purpose', 'model: haiku\n'));
    const catalog = await loadAgents({ cwd, dirs: [extra] });
    expect(catalog.list().map((a) => [a.name, a.source])).toEqual([
      ['general-purpose', path.join(extra, 'general-purpose.md')],
      ['b', path.join(extra, 'b.md')],
    ]);
    expect(catalog.get('b')?.tools).toEqual(['echo']);
  });

  it("the user's ~/.claude/agents first, then the project's: a project agent of the same name wins", async () => {
    const home = path.join(cwd, 'home', '.claude');
    await mkdir(path.join(home, 'agents'), { recursive: true });
    await writeFile(path.join(home, 'agents', 'mine.md'), agent('mine'));
    await writeFile(path.join(home, 'agents', 'shared.md'), agent('shared', 'model: opus\n'));
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    await writeFile(path.join(cwd, '.claude', 'agents', 'shared.md'), agent('shared', 'model: haiku\n'));
    const catalog = await loadAgents({ cwd, userDir: home });
    expect(catalog.list().map((a) => [a.name, a.source, a.model])).toEqual([
      ['general-purpose', 'built-in', 'inherit'],
      ['mine', path.join(home, 'agents', 'mine.md'), 'inherit'],
      ['shared', path.join(cwd, '.claude', 'agents', 'shared.md'), 'haiku'],
    ]);
    // Without userDir the home is not read (the library's default).
    expect((await loadAgents({ cwd })).list().map((a) => a.name)).toEqual(['general-purpose', 'shared']);
    expect((await loadAgents({ cwd, userDir: home, project: false })).get('shared')?.model).toBe('opus');
  });

  it('a bad file is one warning naming it and the line, that agent skipped; a README is skipped silently', async () => {
    const dir = path.join(cwd, '.claude', 'agents');
    await mkdir(dir, { recursive: true });
    await writeFile(path.join(dir, 'README.md'), '# Agents\n\nOne file per agent.\n');
    await writeFile(path.join(dir, 'broken.md'), '---\nname: broken\ndescription: [oops\n---\nbody\n');
    await writeFile(path.join(dir, 'good.md'), agent('good'));
    await writeFile(path.join(dir, 'nameless.md'), '---\ndescription: d\n---\nbody\n');
    await writeFile(path.join(dir, 'twin.md'), agent('good'));
    await mkdir(path.join(dir, 'folder.md'));
    await writeFile(path.join(dir, 'huge.md'), Buffer.alloc(MAX_AGENT_FILE_BYTES + 1, 'x'));
    const catalog = await loadAgents({ cwd });
    expect(catalog.list().map((a) => a.name)).toEqual(['general-purpose', 'good']);
    expect(catalog.warnings).toHaveLength(4);
    expect(catalog.warnings[0]).toMatch(
      new RegExp(
        `^agent definition ${esc(path.join(dir, 'broken.md'))}: line 3: the front matter is not valid YAML: .*; skipped$`,
      ),
    );
    expect(catalog.warnings.slice(1)).toEqual([
      `agent definition ${path.join(dir, 'huge.md')}: ${MAX_AGENT_FILE_BYTES + 1} bytes, more than the ${MAX_AGENT_FILE_BYTES} it may have; skipped`,
      `agent definition ${path.join(dir, 'nameless.md')}, field "name": is required; skipped`,
      `agent definition ${path.join(dir, 'twin.md')}, field "name": "good" is also defined by ${path.join(dir, 'good.md')}; skipped`,
    ]);
  });

  it('no .claude/agents is fine; a missing --agents-dir is an error (the flag asked for it)', async () => {
    expect((await loadAgents({ cwd })).list().map((a) => a.name)).toEqual(['general-purpose']);
    await expect(loadAgents({ cwd, dirs: [path.join(cwd, 'nope')] })).rejects.toThrow(AgentDefinitionError);
  });

  it('a session offers a child only the tools it has: the rest are left out with a warning', async () => {
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    const file = path.join(cwd, '.claude', 'agents', 'bad.md');
    await writeFile(file, agent('bad', 'tools: echo, Bash\n'));
    const agents = await loadAgents({ cwd });
    await Session.create({
      store: new MemoryEventStore(),
      model: new ScriptedModelClient({ turns: [] }),
      tools: [echoTool],
      subAgents: { agents },
    });
    expect(agents.get('bad')?.tools).toEqual(['echo']);
    expect(agents.warnings).toEqual([
      `agent definition ${file}, field "tools": tool this runtime does not have left out: Bash; the agent gets echo`,
    ]);
  });
});

function esc(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
