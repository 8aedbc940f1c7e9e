import { stat } from 'node:fs/promises';
import path from 'node:path';
import { glob } from 'tinyglobby';

/**
 * Which transcripts a path names. Claude Code's layout:
 *
 *   ~/.claude/projects/<project>/<sessionId>.jsonl                         a session
 *   ~/.claude/projects/<project>/<sessionId>/subagents/agent-<agentId>.jsonl   its sub-agents
 *   ~/.claude/projects/<project>/<sessionId>/subagents/agent-<agentId>.meta.json
 *
 * A path may be one transcript, a project folder or the whole projects folder.
 */

export interface SubagentFile {
  file: string;
  agentId: string;
  /** `agent-<agentId>.meta.json` beside it, when there is one. */
  meta: string | null;
}

/** A session and its sub-agents: imported together, the parent first. */
export interface TranscriptUnit {
  /** The session's transcript; null when only sub-agent files of it were found. */
  main: string | null;
  /** Claude Code's session id (the main file's name, or the folder the sub-agents are in). */
  sessionId: string;
  children: SubagentFile[];
}

export interface Discovery {
  units: TranscriptUnit[];
  /** `.jsonl` files inside a session's folder that are no transcript (workflow journals…). */
  ignored: string[];
  /**
   * What a folder held that is not read, and why: `.jsonl` files whose name, or a folder's below
   * the one given, starts with a dot (an editor's backup, a tool's temporary file; named on its
   * own, a hidden file is imported), and the store being imported into (its logs are no
   * transcripts).
   */
  skipped: { path: string; why: 'hidden' | 'store' }[];
}

/** A path below `root` with a segment starting with a dot. */
function isHidden(file: string, root: string): boolean {
  return path
    .relative(root, file)
    .split(path.sep)
    .some((segment) => segment.startsWith('.'));
}

/** A path that names nothing to import: bad usage. */
export class ImportPathError extends Error {
  readonly code = 'IMPORT_PATH';
  constructor(
    readonly path: string,
    detail: string,
  ) {
    super(`${path}: ${detail}`);
    this.name = 'ImportPathError';
  }
}

const AGENT_FILE = /^agent-(.+)\.jsonl$/;

/** Where a sub-agent file belongs: the session folder before `subagents/`, and its agent id. */
function subagentOf(file: string): { sessionDir: string; agentId: string } | null {
  const name = path.basename(file);
  const m = AGENT_FILE.exec(name);
  if (!m) return null;
  const parts = file.split(path.sep);
  const at = parts.lastIndexOf('subagents');
  if (at < 1) return null;
  return { sessionDir: parts.slice(0, at).join(path.sep), agentId: m[1]! };
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

async function kindOf(p: string): Promise<'file' | 'dir'> {
  try {
    const s = await stat(p);
    if (s.isDirectory()) return 'dir';
    if (s.isFile()) return 'file';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT')
      throw new ImportPathError(p, 'no such file or folder');
    throw e;
  }
  throw new ImportPathError(p, 'neither a file nor a folder');
}

export async function discoverTranscripts(
  paths: readonly string[],
  { skipDirs = [] }: { skipDirs?: readonly string[] } = {},
): Promise<Discovery> {
  const units = new Map<string, TranscriptUnit>();
  const ignored: string[] = [];
  const skipped: Discovery['skipped'] = [];
  const skip = skipDirs.map((d) => path.resolve(d));
  const unitFor = (sessionDir: string): TranscriptUnit => {
    let unit = units.get(sessionDir);
    if (!unit) {
      unit = { main: null, sessionId: path.basename(sessionDir), children: [] };
      units.set(sessionDir, unit);
    }
    return unit;
  };
  const addSubagent = async (file: string, where: { sessionDir: string; agentId: string }) => {
    const unit = unitFor(where.sessionDir);
    if (unit.children.some((c) => c.file === file)) return;
    const meta = file.replace(/\.jsonl$/, '.meta.json');
    unit.children.push({ file, agentId: where.agentId, meta: (await isFile(meta)) ? meta : null });
  };
  const addMain = async (file: string) => {
    const unit = unitFor(file.replace(/\.jsonl$/, ''));
    unit.main = file;
    // The sub-agents come with their session, whichever path named it.
    const dir = path.join(file.replace(/\.jsonl$/, ''), 'subagents');
    for (const f of await glob('**/agent-*.jsonl', { cwd: dir, absolute: true, onlyFiles: true })) {
      const where = subagentOf(path.normalize(f));
      if (where) await addSubagent(path.normalize(f), where);
    }
  };

  for (const given of paths) {
    const p = path.resolve(given);
    if ((await kindOf(p)) === 'file') {
      const sub = subagentOf(p);
      if (sub) {
        // A sub-agent alone brings its session along (the link needs the parent's calls).
        const main = `${sub.sessionDir}.jsonl`;
        if (await isFile(main)) await addMain(main);
        await addSubagent(p, sub);
      } else {
        await addMain(p);
      }
      continue;
    }
    const found = (await glob('**/*.jsonl', { cwd: p, absolute: true, onlyFiles: true, dot: true }))
      .map((f) => path.normalize(f))
      .sort();
    const inSkipped = (f: string) => skip.find((d) => f.startsWith(d + path.sep));
    for (const d of skip) {
      if (found.some((f) => f.startsWith(d + path.sep))) skipped.push({ path: d, why: 'store' });
    }
    const files = found.filter((f) => {
      if (inSkipped(f)) return false;
      if (!isHidden(f, p)) return true;
      skipped.push({ path: f, why: 'hidden' });
      return false;
    });
    const mains = new Set(files.filter((f) => !subagentOf(f)));
    for (const f of files) {
      const sub = subagentOf(f);
      if (sub) await addSubagent(f, sub);
      else if (insideSession(f, p, mains)) ignored.push(f);
      else await addMain(f);
    }
  }
  const sorted = [...units.values()].sort((a, b) =>
    (a.main ?? a.sessionId).localeCompare(b.main ?? b.sessionId),
  );
  for (const u of sorted) u.children.sort((a, b) => a.file.localeCompare(b.file));
  return { units: sorted, ignored, skipped };
}

/** A `.jsonl` under `<sessionId>/` next to `<sessionId>.jsonl` belongs to that session, not a transcript. */
function insideSession(file: string, root: string, mains: ReadonlySet<string>): boolean {
  for (let dir = path.dirname(file); dir.startsWith(root) && dir !== root; dir = path.dirname(dir)) {
    if (mains.has(`${dir}.jsonl`)) return true;
  }
  return false;
}
