import { describe, expect, it } from 'vitest';
import {
  AgentCatalog,
  AgentDefinitionError,
  childModel,
  GENERAL_PURPOSE_AGENT,
  parseAgentFile,
  taskToolDescription,
} from '../../src/agents/index.ts';

const file = '/p/.claude/agents/a.md';

function errorOf(text: string): AgentDefinitionError {
  try {
    parseAgentFile(text, file);
  } catch (e) {
    if (e instanceof AgentDefinitionError) return e;
    throw e;
  }
  throw new Error('no error');
}

describe('agent files (Claude Code .claude/agents/<name>.md)', () => {
  it('front matter and body', () => {
    const d = parseAgentFile(
      '---\nname: test-runner\ndescription: Runs the tests.\ntools: Bash, Read ,Grep\nmodel: sonnet\ncolor: blue\n---\n\nYou run tests.\nReport failures.\n',
      file,
    );
    expect(d).toEqual({
      name: 'test-runner',
      description: 'Runs the tests.',
      tools: ['Bash', 'Read', 'Grep'],
      model: 'sonnet',
      systemPrompt: 'You run tests.\nReport failures.',
      source: file,
    });
  });

  it('absent tools = all but Task; absent model = inherit; a YAML list of tools works too', () => {
    expect(parseAgentFile('---\nname: a\ndescription: d\n---\nbody', file)).toMatchObject({
      tools: null,
      model: 'inherit',
    });
    expect(
      parseAgentFile('---\nname: a\ndescription: d\ntools: [Read, Grep]\n---\nbody', file).tools,
    ).toEqual(['Read', 'Grep']);
  });

  it('errors name the file and the field', () => {
    expect(errorOf('no front matter').message).toBe(
      `agent definition ${file}: no YAML front matter: the file must start with a --- … --- block`,
    );
    expect(errorOf('---\nname: [a\n---\nbody').message).toMatch(
      /front matter is not valid YAML \(front matter line \d\)/,
    );
    const missing = errorOf('---\ndescription: d\n---\nbody');
    expect([missing.field, missing.code]).toEqual(['name', 'AGENT_DEFINITION_INVALID']);
    expect(missing.message).toBe(`agent definition ${file}, field "name": is required`);
    expect(errorOf('---\nname: a b\ndescription: d\n---\nbody').field).toBe('name');
    expect(errorOf('---\nname: a\ndescription: d\ntools: 3\n---\nbody').field).toBe('tools');
    expect(errorOf('---\nname: a\ndescription: d\n---\n  \n').message).toContain(
      'the body (the system prompt) is empty',
    );
    expect(errorOf('---\n- a\n---\nbody').message).toContain('must be a mapping');
  });

  it('unknown tools and Task in `tools` are start-up errors naming the file', () => {
    const catalog = new AgentCatalog([
      GENERAL_PURPOSE_AGENT,
      parseAgentFile('---\nname: a\ndescription: d\ntools: Read, Frobnicate\n---\nb', file),
    ]);
    expect(() => catalog.checkTools(['Read', 'Task'])).toThrow(
      `agent definition ${file}, field "tools": unknown tool "Frobnicate"; the tools are Read`,
    );
    const task = new AgentCatalog([
      parseAgentFile('---\nname: a\ndescription: d\ntools: Task\n---\nb', file),
    ]);
    expect(() => task.checkTools(['Task'])).toThrow(/sub-agents are one level deep/);
  });

  it('models: inherit, aliases, full ids, and the Task call choosing', () => {
    expect(childModel('claude-sonnet-4-6', 'inherit')).toBe('claude-sonnet-4-6');
    expect(childModel('claude-sonnet-4-6', 'haiku')).toBe('claude-haiku-4-5');
    expect(childModel('claude-sonnet-4-6', 'claude-opus-4-8')).toBe('claude-opus-4-8');
    expect(childModel('claude-sonnet-4-6', 'inherit', 'opus')).toBe('claude-opus-4-6');
  });

  it('the Task description lists every agent with its tools', () => {
    const text = taskToolDescription([
      GENERAL_PURPOSE_AGENT,
      { ...GENERAL_PURPOSE_AGENT, name: 'r', description: 'Reviews.', tools: ['Read'] },
    ]);
    expect(text).toContain(`- general-purpose: ${GENERAL_PURPOSE_AGENT.description} (Tools: *)`);
    expect(text).toContain('- r: Reviews. (Tools: Read)');
  });
});
