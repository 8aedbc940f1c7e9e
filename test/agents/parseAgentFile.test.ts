import { describe, expect, it } from 'vitest';
import {
  AgentCatalog,
  AgentDefinitionError,
  childModel,
  GENERAL_PURPOSE_AGENT,
  MAX_FRONT_MATTER_CHARS,
  parseAgentFile,
  readAgentFile,
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
    expect(errorOf('---\nname: a\ndescription: [d\n---\nbody').message).toMatch(
      /^agent definition \/p\/\.claude\/agents\/a\.md: line 3: the front matter is not valid YAML: /,
    );
    const missing = errorOf('---\ndescription: d\n---\nbody');
    expect([missing.field, missing.code]).toEqual(['name', 'AGENT_DEFINITION_INVALID']);
    expect(missing.message).toBe(`agent definition ${file}, field "name": is required`);
    expect(errorOf('---\nname: a\ndescription: d\nmodel: 3\n---\nbody').message).toBe(
      `agent definition ${file}, field "model": Invalid input: expected string, received number (line 4)`,
    );
    expect(errorOf('---\nname: a b\ndescription: d\n---\nbody').field).toBe('name');
    expect(errorOf('---\nname: a\ndescription: d\ntools: 3\n---\nbody').field).toBe('tools');
    expect(errorOf('---\nname: a\ndescription: d\n---\n  \n').message).toContain(
      'the body (the system prompt) is empty',
    );
    expect(errorOf('---\n- a\n---\nbody').message).toContain('must be a mapping');
  });

  it('tools this runtime does not have are left out with a warning naming the file; the agent gets the rest', () => {
    // A real agent file from a public collection: older and other runtimes' tools.
    const catalog = new AgentCatalog([
      GENERAL_PURPOSE_AGENT,
      parseAgentFile(
        '---\nname: a\ndescription: d\ntools: Glob, Grep, LS, Read, NotebookRead, WebFetch, TodoWrite, WebSearch, KillShell, BashOutput\n---\nb',
        file,
      ),
    ]);
    const known = [
      'Read',
      'Write',
      'Edit',
      'Bash',
      'BashOutput',
      'KillShell',
      'Glob',
      'Grep',
      'TodoWrite',
      'WebFetch',
      'Task',
    ];
    expect(catalog.checkTools(known)).toEqual([
      `agent definition ${file}, field "tools": tools this runtime does not have left out: LS, NotebookRead, WebSearch; the agent gets Glob, Grep, Read, WebFetch, TodoWrite, KillShell, BashOutput`,
    ]);
    expect(catalog.get('a')?.tools).toEqual([
      'Glob',
      'Grep',
      'Read',
      'WebFetch',
      'TodoWrite',
      'KillShell',
      'BashOutput',
    ]);
    expect(catalog.get('general-purpose')?.tools).toBeNull();
    // Checking again (the session does, after the CLI) adds nothing.
    expect(catalog.checkTools(known)).toEqual([]);
    expect(catalog.warnings).toHaveLength(1);

    const task = new AgentCatalog([
      parseAgentFile(
        '---\nname: a\ndescription: d\ntools: Task, Read, mcp__github__*, mcp__github__get_issue\n---\nb',
        file,
      ),
    ]);
    expect(task.checkTools(['Read', 'Task'])).toEqual([
      `agent definition ${file}, field "tools": tools this runtime does not have left out: Task, mcp__github__* (Task: sub-agents are one level deep); the agent gets Read, mcp__github__get_issue`,
    ]);
    const none = new AgentCatalog([
      parseAgentFile('---\nname: a\ndescription: d\ntools: WebSearch\n---\nb', file),
    ]);
    expect(none.checkTools(['Read'])[0]).toMatch(/left out: WebSearch; the agent gets no tools$/);
    expect(none.get('a')?.tools).toEqual([]);
  });

  it('tools as a comma string, a YAML list, a JSON list, empty or absent', () => {
    const tools = (fm: string) => parseAgentFile(`---\nname: a\ndescription: d\n${fm}---\nb`, file).tools;
    expect(tools('tools: Read,Grep , Glob\n')).toEqual(['Read', 'Grep', 'Glob']);
    expect(tools('tools:\n  - Read\n  - Grep\n')).toEqual(['Read', 'Grep']);
    expect(tools('tools: ["Read", "Grep"]\n')).toEqual(['Read', 'Grep']);
    expect(tools('tools: ["Read, Grep"]\n')).toEqual(['Read', 'Grep']);
    expect(tools('tools: []\n')).toEqual([]);
    expect(tools('tools:\n')).toBeNull();
    expect(tools('')).toBeNull();
  });

  it('model: an alias, inherit, a full id, or absent; unknown keys are ignored', () => {
    const def = (fm: string) => parseAgentFile(`---\nname: a\ndescription: d\n${fm}---\nb`, file);
    expect(def('model: haiku\n').model).toBe('haiku');
    expect(def('model: inherit\n').model).toBe('inherit');
    expect(def('model: claude-opus-4-1-20250805\n').model).toBe('claude-opus-4-1-20250805');
    expect(def('model:\n').model).toBe('inherit');
    expect(
      def(
        'color: red\nmemory: project\nisolation: worktree\nskills:\n  - a\n  - b\npermissionMode: plan\nhooks: {}\n',
      ),
    ).toMatchObject({ name: 'a', description: 'd', tools: null, model: 'inherit' });
  });

  it("a description with unquoted ': ' inside (public collections write them) reads as Claude Code reads it", () => {
    const d = parseAgentFile(
      '---\nname: reviewer\ndescription: Use this agent when: the user asks for a review. Examples: <example>user: "review"</example>\ntools: Read\n---\nYou review.',
      file,
    );
    expect(d.description).toBe(
      'Use this agent when: the user asks for a review. Examples: <example>user: "review"</example>',
    );
    expect(d.tools).toEqual(['Read']);
  });

  it('a README without front matter is not an agent; a broken one is invalid, never a throw', () => {
    expect(readAgentFile('# Our agents\n\nSee the files here.\n', file)).toEqual({ kind: 'not-agent' });
    const open = readAgentFile('---\nname: a\ndescription: d\n', file);
    expect(open.kind === 'invalid' && open.error.message).toBe(
      `agent definition ${file}: line 1: the front matter has no closing --- line`,
    );
  });

  it('front matter is capped before it is parsed (40 000 keys took 20 s to parse)', () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `k${i}: v`).join('\n');
    const r = readAgentFile(`---\nname: a\ndescription: d\n${keys}\n---\nbody\n`, file);
    expect(r.kind === 'invalid' && r.error.message).toBe(
      `agent definition ${file}: the front matter is longer than ${MAX_FRONT_MATTER_CHARS} characters`,
    );
    // No closing fence at all: the same answer, without scanning for one past the cap.
    const unclosed = readAgentFile(`---\nname: a\n${keys}\n`, file);
    expect(unclosed.kind === 'invalid' && unclosed.error.message).toMatch(/no closing --- line|longer than/);
    // Just under the cap parses.
    const under = Array.from({ length: 2_000 }, (_, i) => `k${i}: v`).join('\n');
    expect(under.length).toBeLessThan(MAX_FRONT_MATTER_CHARS);
    expect(readAgentFile(`---\nname: a\ndescription: d\n${under}\n---\nbody\n`, file).kind).toBe('agent');
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
