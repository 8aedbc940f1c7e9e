import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { messageOf } from '../lib/errors.ts';
import { GENERAL_PURPOSE_AGENT } from './builtin.ts';
import {
  type AgentDefinition,
  AgentDefinitionError,
  AgentFrontMatterSchema,
  TASK_TOOL_NAME,
} from './definition.ts';

/** The agents a session's `Task` tool can start, by name (the `subagent_type`). */
export class AgentCatalog {
  private readonly byName = new Map<string, AgentDefinition>();

  constructor(definitions: readonly AgentDefinition[] = [GENERAL_PURPOSE_AGENT]) {
    // Later definitions win: a project's file may redefine a built-in, as in Claude Code.
    for (const d of definitions) this.byName.set(d.name, d);
  }

  get(name: string): AgentDefinition | undefined {
    return this.byName.get(name);
  }

  list(): AgentDefinition[] {
    return [...this.byName.values()];
  }

  /**
   * Every `tools` entry must name a tool the parent has, and none may be `Task`: a bad name is
   * a startup error naming the file, never a child that silently gets fewer tools.
   */
  checkTools(known: readonly string[]): void {
    const names = new Set(known);
    for (const d of this.byName.values()) {
      for (const t of d.tools ?? []) {
        if (t === TASK_TOOL_NAME)
          throw new AgentDefinitionError(
            d.source,
            'tools',
            `a sub-agent cannot have ${TASK_TOOL_NAME}: sub-agents are one level deep`,
          );
        if (!names.has(t))
          throw new AgentDefinitionError(
            d.source,
            'tools',
            `unknown tool ${JSON.stringify(t)}; the tools are ${[...names].filter((n) => n !== TASK_TOOL_NAME).join(', ')}`,
          );
      }
    }
  }
}

export interface LoadAgentsOptions {
  /** The working directory: its `.claude/agents/*.md` are read. */
  cwd: string;
  /** More directories of `*.md` agent files (`--agents-dir`), read after the working directory's. */
  dirs?: readonly string[];
}

/**
 * The built-in `general-purpose` agent plus every `*.md` file of `<cwd>/.claude/agents` and
 * of `dirs`, in that order (a later definition of a name replaces an earlier one). A missing
 * `.claude/agents` is normal; a missing `--agents-dir` or a bad file is an AgentDefinitionError.
 */
export async function loadAgents(opts: LoadAgentsOptions): Promise<AgentCatalog> {
  const defs: AgentDefinition[] = [GENERAL_PURPOSE_AGENT];
  defs.push(...(await readAgentDir(path.join(opts.cwd, '.claude', 'agents'), { optional: true })));
  for (const dir of opts.dirs ?? [])
    defs.push(...(await readAgentDir(path.resolve(dir), { optional: false })));
  return new AgentCatalog(defs);
}

async function readAgentDir(dir: string, { optional }: { optional: boolean }): Promise<AgentDefinition[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
  } catch (e) {
    if (optional && (e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new AgentDefinitionError(dir, null, `cannot read the directory: ${(e as Error).message}`);
  }
  const out: AgentDefinition[] = [];
  const seen = new Map<string, string>();
  for (const n of names) {
    const file = path.join(dir, n);
    const def = parseAgentFile(await readFile(file, 'utf8'), file);
    const twin = seen.get(def.name);
    if (twin)
      throw new AgentDefinitionError(file, 'name', `${JSON.stringify(def.name)} is also defined by ${twin}`);
    seen.set(def.name, file);
    out.push(def);
  }
  return out;
}

const FENCE = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/** One agent file: YAML front matter between `---` fences, then the system prompt. */
export function parseAgentFile(text: string, file: string): AgentDefinition {
  const m = FENCE.exec(text.replace(/^\uFEFF/, ''));
  if (!m)
    throw new AgentDefinitionError(
      file,
      null,
      'no YAML front matter: the file must start with a --- … --- block',
    );
  let raw: unknown;
  try {
    raw = parseYaml(m[1]!);
  } catch (e) {
    const where = e instanceof YAMLParseError && e.linePos ? ` (front matter line ${e.linePos[0].line})` : '';
    throw new AgentDefinitionError(file, null, `the front matter is not valid YAML${where}: ${firstLine(e)}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new AgentDefinitionError(file, null, 'the front matter must be a mapping of fields');
  const parsed = AgentFrontMatterSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join('.') : null;
    const detail = issue.code === 'invalid_type' && issue.input === undefined ? 'is required' : issue.message;
    throw new AgentDefinitionError(file, field, detail);
  }
  const body = text.slice(m[0].length + (text.startsWith('\uFEFF') ? 1 : 0)).trim();
  if (body === '') throw new AgentDefinitionError(file, null, 'the body (the system prompt) is empty');
  const fm = parsed.data;
  return {
    name: fm.name,
    description: fm.description,
    tools: fm.tools ?? null,
    model: fm.model ?? 'inherit',
    systemPrompt: body,
    source: file,
  };
}

function firstLine(e: unknown): string {
  return messageOf(e).split('\n')[0]!;
}
