import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentDefinitionError, loadAgents } from '../../src/agents/index.ts';
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

  it('no .claude/agents is fine; a missing --agents-dir or two files with one name is an error', async () => {
    expect((await loadAgents({ cwd })).list().map((a) => a.name)).toEqual(['general-purpose']);
    await expect(loadAgents({ cwd, dirs: [path.join(cwd, 'nope')] })).rejects.toThrow(AgentDefinitionError);
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    await writeFile(path.join(cwd, '.claude', 'agents', 'x.md'), agent('same'));
    await writeFile(path.join(cwd, '.claude', 'agents', 'y.md'), agent('same'));
    await expect(loadAgents({ cwd })).rejects.toThrow(
      `agent definition ${path.join(cwd, '.claude', 'agents', 'y.md')}, field "name": "same" is also defined by ${path.join(cwd, '.claude', 'agents', 'x.md')}`,
    );
  });

  it('a session refuses, at start-up, an agent whose tools it does not have', async () => {
    await mkdir(path.join(cwd, '.claude', 'agents'), { recursive: true });
    const file = path.join(cwd, '.claude', 'agents', 'bad.md');
    await writeFile(file, agent('bad', 'tools: echo, Bash\n'));
    const agents = await loadAgents({ cwd });
    await expect(
      Session.create({
        store: new MemoryEventStore(),
        model: new ScriptedModelClient({ turns: [] }),
        tools: [echoTool],
        subAgents: { agents },
      }),
    ).rejects.toThrow(`agent definition ${file}, field "tools": unknown tool "Bash"; the tools are echo`);
  });
});
