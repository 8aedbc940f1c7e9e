import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { errnoCode, messageOf } from '../lib/errors.ts';
import { readCapped } from '../lib/readCapped.ts';
import { readAgentFile } from './agentFile.ts';
import { GENERAL_PURPOSE_AGENT } from './builtin.ts';
import { AgentCatalog } from './catalog.ts';
import { type AgentDefinition, AgentDefinitionError } from './definition.ts';

/** An agent file larger than this is skipped unread: a system prompt is never this long. */
export const MAX_AGENT_FILE_BYTES = 1024 * 1024;

export interface LoadAgentsOptions {
  /** The working directory: its `.claude/agents/*.md` are read. */
  cwd: string;
  /** More directories of `*.md` agent files (`--agents-dir`), read after the working directory's. */
  dirs?: readonly string[];
  /**
   * The user's Claude directory (`~/.claude`, see `userClaudeDir` in src/settings): its
   * `agents/*.md` are read first, so a project's agent of the same name wins. Absent: not read.
   */
  userDir?: string;
  /** Read the working directory's `.claude/agents` (default true). */
  project?: boolean;
}

/**
 * The built-in `general-purpose` agent, then `<userDir>/agents`, `<cwd>/.claude/agents` and each
 * of `dirs`, in that order (a later definition of a name replaces an earlier one). A file that
 * cannot be used is a warning naming it (`catalog.warnings`) and that agent is skipped: one bad
 * file never stops a run. A `.md` without front matter (a README) is not an agent and is skipped.
 * Only a `--agents-dir` that cannot be read is an AgentDefinitionError (the flag asked for it).
 */
export async function loadAgents(opts: LoadAgentsOptions): Promise<AgentCatalog> {
  const defs: AgentDefinition[] = [GENERAL_PURPOSE_AGENT];
  const warnings: string[] = [];
  const read = async (dir: string, optional: boolean) => {
    const r = await readAgentDir(dir, optional);
    defs.push(...r.defs);
    warnings.push(...r.warnings);
  };
  if (opts.userDir !== undefined) await read(path.join(opts.userDir, 'agents'), true);
  if (opts.project !== false) await read(path.join(opts.cwd, '.claude', 'agents'), true);
  for (const dir of opts.dirs ?? []) await read(path.resolve(dir), false);
  return new AgentCatalog(defs, warnings);
}

async function readAgentDir(
  dir: string,
  optional: boolean,
): Promise<{ defs: AgentDefinition[]; warnings: string[] }> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith('.md')).sort();
  } catch (e) {
    if (optional && (errnoCode(e) === 'ENOENT' || errnoCode(e) === 'ENOTDIR'))
      return { defs: [], warnings: [] };
    if (optional)
      return {
        defs: [],
        warnings: [`agents directory ${dir}: cannot be read (${messageOf(e)}); its agents are skipped`],
      };
    throw new AgentDefinitionError(dir, null, `cannot read the directory: ${messageOf(e)}`);
  }
  const defs: AgentDefinition[] = [];
  const warnings: string[] = [];
  const seen = new Map<string, string>();
  for (const n of names) {
    const file = path.join(dir, n);
    const text = await readCapped(file, MAX_AGENT_FILE_BYTES);
    if (typeof text !== 'string') {
      if (text) warnings.push(`agent definition ${file}: ${text.problem}; skipped`);
      continue;
    }
    const r = readAgentFile(text, file);
    if (r.kind === 'not-agent') continue;
    if (r.kind === 'invalid') {
      warnings.push(`${r.error.message}; skipped`);
      continue;
    }
    const twin = seen.get(r.definition.name);
    if (twin) {
      warnings.push(
        `agent definition ${file}, field "name": ${JSON.stringify(r.definition.name)} is also defined by ${twin}; skipped`,
      );
      continue;
    }
    seen.set(r.definition.name, file);
    defs.push(r.definition);
  }
  return { defs, warnings };
}
