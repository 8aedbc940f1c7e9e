import { readFile, stat } from 'node:fs/promises';
import { MAX_JSON_DEPTH, nestedDeeperThan } from '../../lib/jsonDepth.ts';
import { classifyLine, clipText } from './classify.ts';
import type { TranscriptEvent } from './events.ts';

/** What the lines of a transcript say about the session as a whole. */
export interface TranscriptInfo {
  file: string;
  bytes: number;
  lines: number;
  /** The first `sessionId` a line carries (a sub-agent's is its parent's). */
  sessionId: string | null;
  version: string | null;
  cwd: string | null;
  agentId: string | null;
  /** The best title a line gives (custom > generated > summary), or null. */
  title: string | null;
}

/**
 * Sub-agent lines older Claude Code versions kept inside the main transcript
 * (`isSidechain: true`), one group per sub-agent: they become child sessions like the files
 * under `subagents/` do.
 */
export interface InlineSidechain {
  /** The sub-agent's `agentId`, or the uuid of its first line. */
  key: string;
  events: TranscriptEvent[];
}

export interface Transcript {
  info: TranscriptInfo;
  events: TranscriptEvent[];
  sidechains: InlineSidechain[];
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads and classifies a whole transcript. The file is held in memory while it is read (the
 * importer's memory is bounded by the largest session, not by the folder). A line that is not
 * JSON becomes a `malformed` event naming its line: the read goes on with the next one.
 * `asSidechain`: the file is a sub-agent's own transcript, so its sidechain lines are its body.
 */
export async function readTranscript(file: string, { asSidechain = false } = {}): Promise<Transcript> {
  const [buf, st] = await Promise.all([readFile(file), stat(file)]);
  return parseTranscript(buf.toString('utf8'), { file, bytes: st.size, mtimeMs: st.mtimeMs, asSidechain });
}

export interface ParseOptions {
  file: string;
  bytes?: number;
  /** Time for lines when none has a timestamp. */
  mtimeMs?: number;
  asSidechain?: boolean;
}

/** `readTranscript` on text already in memory. */
export function parseTranscript(source: string, options: ParseOptions): Transcript {
  const text = source.charCodeAt(0) === 0xfeff ? source.slice(1) : source;
  const asSidechain = options.asSidechain ?? false;
  const info: TranscriptInfo = {
    file: options.file,
    bytes: options.bytes ?? Buffer.byteLength(source),
    lines: 0,
    sessionId: null,
    version: null,
    cwd: null,
    agentId: null,
    title: null,
  };
  let titleRank = 0;
  const events: TranscriptEvent[] = [];
  const groups = new Map<string, InlineSidechain>();
  const groupOfUuid = new Map<string, InlineSidechain>();

  let lineNo = 0;
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const raw = text.charCodeAt(end - 1) === 0x0d ? text.slice(start, end - 1) : text.slice(start, end);
    start = end + 1;
    lineNo++;
    // Blank lines are skipped without copying every line to trim it.
    if (raw.length === 0 || (raw.charCodeAt(0) <= 0x20 && raw.trim() === '')) continue;
    info.lines++;
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (e) {
      events.push(malformed(lineNo, `not valid JSON (${(e as Error).message})`, raw));
      continue;
    }
    if (!isObject(parsed)) {
      events.push(malformed(lineNo, 'not a JSON object', raw));
      continue;
    }
    // A tool input a model nested thousands deep: refused here rather than overflow a walk later.
    if (nestedDeeperThan(parsed, MAX_JSON_DEPTH)) {
      events.push(malformed(lineNo, `nested deeper than ${MAX_JSON_DEPTH} levels`, raw));
      continue;
    }
    info.sessionId ??= typeof parsed.sessionId === 'string' ? parsed.sessionId : null;
    info.version ??= typeof parsed.version === 'string' ? parsed.version : null;
    info.cwd ??= typeof parsed.cwd === 'string' ? parsed.cwd : null;
    info.agentId ??= typeof parsed.agentId === 'string' ? parsed.agentId : null;
    const classified = classifyLine(parsed, lineNo, () => raw);
    for (const e of classified) {
      if (e.kind === 'bookkeeping' && e.title && e.title.rank >= titleRank) {
        titleRank = e.title.rank;
        info.title = e.title.text;
      }
    }
    const target =
      !asSidechain && parsed.isSidechain === true ? sidechainOf(parsed, groups, groupOfUuid) : null;
    (target ? target.events : events).push(...classified);
  }
  const fallback = options.mtimeMs ?? 0;
  fillTimes(events, fallback);
  for (const g of groups.values()) fillTimes(g.events, fallback);
  return { info, events, sidechains: [...groups.values()] };
}

function malformed(line: number, why: string, raw: string): TranscriptEvent {
  return { kind: 'malformed', line, at: Number.NaN, why, text: clipText(raw) };
}

/** The inline sub-agent a sidechain line belongs to: by `agentId`, else by the chain of `parentUuid`s. */
function sidechainOf(
  line: Json,
  groups: Map<string, InlineSidechain>,
  groupOfUuid: Map<string, InlineSidechain>,
): InlineSidechain {
  const uuid = typeof line.uuid === 'string' ? line.uuid : null;
  const parent = typeof line.parentUuid === 'string' ? line.parentUuid : null;
  const agentId = typeof line.agentId === 'string' ? line.agentId : null;
  let group = agentId ? groups.get(agentId) : parent ? groupOfUuid.get(parent) : undefined;
  if (!group) {
    const key = agentId ?? uuid ?? `line-${groups.size + 1}`;
    group = { key, events: [] };
    groups.set(key, group);
  }
  if (uuid) groupOfUuid.set(uuid, group);
  return group;
}

/** A line without a timestamp takes the one before it (or, at the start, the first one after). */
function fillTimes(events: TranscriptEvent[], fallback: number): void {
  let last = Number.NaN;
  for (const e of events) {
    if (Number.isNaN(e.at)) e.at = last;
    else last = e.at;
  }
  const first = events.find((e) => !Number.isNaN(e.at))?.at ?? fallback;
  for (const e of events) {
    if (!Number.isNaN(e.at)) break;
    e.at = first;
  }
}
