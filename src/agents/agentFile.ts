import { parse as parseYaml, YAMLParseError } from 'yaml';
import { messageOf } from '../lib/errors.ts';
import { type AgentDefinition, AgentDefinitionError, AgentFrontMatterSchema } from './definition.ts';

/**
 * The front matter is capped before it is parsed: YAML's duplicate-key check is quadratic in the
 * number of keys (40 000 keys took 20 s), and no real agent's front matter comes near this.
 */
export const MAX_FRONT_MATTER_CHARS = 32 * 1024;

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /\r?\n---[ \t]*(?:\r?\n|$)/;

/** What one `.md` file of an agents folder is: an agent, not an agent at all (a README), or broken. */
export type AgentFileResult =
  | { kind: 'agent'; definition: AgentDefinition }
  | { kind: 'not-agent' }
  | { kind: 'invalid'; error: AgentDefinitionError };

/** One agent file: YAML front matter between `---` fences, then the system prompt. */
export function parseAgentFile(text: string, file: string): AgentDefinition {
  const r = readAgentFile(text, file);
  if (r.kind === 'agent') return r.definition;
  if (r.kind === 'invalid') throw r.error;
  throw new AgentDefinitionError(
    file,
    null,
    'no YAML front matter: the file must start with a --- … --- block',
  );
}

/** Like parseAgentFile, but a file without front matter is `not-agent` and nothing throws. */
export function readAgentFile(text: string, file: string): AgentFileResult {
  const src = text.replace(/^\uFEFF/, '');
  const open = OPEN.exec(src);
  if (!open) return { kind: 'not-agent' };
  const invalid = (detail: string, field: string | null = null): AgentFileResult => ({
    kind: 'invalid',
    error: new AgentDefinitionError(file, field, detail),
  });
  // Look for the closing fence only within the cap (plus the fence itself): never scan further.
  const window = src.slice(open[0].length - 1, open[0].length + MAX_FRONT_MATTER_CHARS + 8);
  const close = CLOSE.exec(window);
  if (!close) {
    return src.length - open[0].length > MAX_FRONT_MATTER_CHARS && CLOSE.test(src.slice(open[0].length - 1))
      ? invalid(`the front matter is longer than ${MAX_FRONT_MATTER_CHARS} characters`)
      : invalid('line 1: the front matter has no closing --- line');
  }
  const fm = window.slice(1, close.index);
  if (fm.length > MAX_FRONT_MATTER_CHARS)
    return invalid(`the front matter is longer than ${MAX_FRONT_MATTER_CHARS} characters`);
  const raw = parseFrontMatter(fm);
  if ('error' in raw) return invalid(raw.error);
  const data = raw.value;
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    return invalid('line 2: the front matter must be a mapping of fields');
  const parsed = AgentFrontMatterSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.length > 0 ? issue.path.join('.') : null;
    const absent = issue.path.length === 1 && !(String(issue.path[0]) in data);
    const detail = absent ? 'is required' : issue.message;
    const line = field ? lineOfKey(fm, String(issue.path[0])) : null;
    return invalid(line ? `${detail} (line ${line})` : detail, field);
  }
  const body = src.slice(open[0].length - 1 + close.index + close[0].length).trim();
  if (body === '') return invalid('the body (the system prompt) is empty');
  const f = parsed.data;
  return {
    kind: 'agent',
    definition: {
      name: f.name,
      description: f.description,
      tools: f.tools ?? null,
      model: f.model ?? 'inherit',
      systemPrompt: body,
      source: file,
    },
  };
}

/**
 * YAML, as Claude Code reads it. Public agent files often carry an unquoted description with
 * `: ` inside (`description: Use when: …`), which strict YAML refuses; Claude Code reads those, so
 * a second try quotes each top-level plain value. What fails both is reported at the first try's line.
 */
function parseFrontMatter(fm: string): { value: unknown } | { error: string } {
  try {
    return { value: parseYaml(fm, { uniqueKeys: false, maxAliasCount: 100 }) };
  } catch (first) {
    try {
      return { value: parseYaml(quotePlainValues(fm), { uniqueKeys: false, maxAliasCount: 100 }) };
    } catch {
      // The file's line: the front matter starts on line 2.
      const line = first instanceof YAMLParseError && first.linePos ? first.linePos[0].line + 1 : null;
      return {
        error: `${line ? `line ${line}: ` : ''}the front matter is not valid YAML: ${yamlProblem(first)}`,
      };
    }
  }
}

const PLAIN_TOP_LEVEL = /^([A-Za-z_][\w-]*):[ \t]+([^\s"'[{|>&*!#%@`].*?)[ \t]*$/;

function quotePlainValues(fm: string): string {
  return fm
    .split(/\r?\n/)
    .map((l) => {
      const m = PLAIN_TOP_LEVEL.exec(l);
      return m ? `${m[1]}: ${JSON.stringify(m[2])}` : l;
    })
    .join('\n');
}

/** The file line on which a top-level key is written (front matter line + 1), if it is. */
function lineOfKey(fm: string, key: string): number | null {
  const i = fm.split(/\r?\n/).findIndex((l) => l.startsWith(`${key}:`));
  return i < 0 ? null : i + 2;
}

/** The parser's first line, without its own position (front-matter relative, so misleading here). */
function yamlProblem(e: unknown): string {
  return messageOf(e)
    .split('\n')[0]!
    .replace(/ at line \d+, column \d+:?\s*$/, '');
}
