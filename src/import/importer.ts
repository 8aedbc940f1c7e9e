import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { messageOf } from '../lib/errors.ts';
import { sameJson } from '../lib/sameJson.ts';
import { defaultRedactor } from '../lib/secrets.ts';
import {
  CURRENT_SCHEMA_VERSION,
  type DraftRecord,
  type ImportedFrom,
  type LogRecord,
  type ParentLink,
} from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { validateRecord } from '../store/validate.ts';
import { createWholeSession, replaceWholeSession } from '../store/wholeStream.ts';
import { isCompactionAgent, linkChild, type ParentSide, readAgentMeta } from './childLinks.ts';
import { type MappedTranscript, mapTranscript, type TranscriptLinks } from './claudeCode/mapTranscript.ts';
import { readTranscript, type Transcript } from './claudeCode/readTranscript.ts';
import { type Discovery, discoverTranscripts, type TranscriptUnit } from './discover.ts';

/** One transcript's outcome (`reloop import --json` prints the first six fields). */
export interface ImportedSession {
  sessionId: string;
  source: string;
  /** Records written; 0 when it was imported before and is left as it is. */
  records: number;
  transitions: number;
  /** Lines not mapped (`import.unmapped` records), malformed ones included. */
  unmapped: number;
  children: ImportedSession[];
  status: 'imported' | 'already imported';
  /** Malformed lines, for the person at the terminal: each names its line. */
  malformed: { line: number; why: string }[];
  /** Unmapped lines by type (bookkeeping is not counted here). */
  unmappedTypes: Record<string, number>;
  /** Set when an earlier import is kept although the transcript changed since. */
  grown?: { before: number; now: number };
  parent?: ParentLink;
}

export interface ImportReport {
  sessions: ImportedSession[];
  /** `.jsonl` files found inside session folders that are no transcript. */
  ignored: string[];
  /** What folders held that was not read: hidden files, the store itself (see Discovery). */
  skipped: Discovery['skipped'];
  /** Transcripts that could not be imported at all (unreadable, a store error): named, not fatal. */
  failures: { source: string; message: string }[];
}

export interface ImportOptions {
  /** Import again what was imported before (the earlier import is replaced). */
  force?: boolean;
  /** Folders never read for transcripts (the CLI passes the store it imports into). */
  skipDirs?: readonly string[];
}

/** A session with an import's id exists but is not an import: it is never replaced. */
export class ImportConflictError extends Error {
  readonly code = 'IMPORT_CONFLICT';
  constructor(
    readonly session: string,
    detail: string,
  ) {
    super(`session ${session}: ${detail}`);
    this.name = 'ImportConflictError';
  }
}

/** A name used as it is in an id: Claude Code's own ids (uuids, `acompact-1a2b3c`, `aprompt_suggestion-…`). */
const PLAIN_NAME = /^[A-Za-z0-9_-]{1,80}$/;

/**
 * One source name as a part of a session id (a file name in the file store). Claude Code's ids
 * are used as they are; any other name gets its unsafe characters replaced and a hash of the
 * exact name, so `a b` and `a_b` (or `x.y` beside session `x`'s agent `y`: parts never hold a
 * dot, which separates them) stay apart.
 */
function idPart(name: string): string {
  if (PLAIN_NAME.test(name)) return name;
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 10);
  return `${name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64)}-${hash}`;
}

/**
 * Deterministic ids, keyed by the source's identity: a transcript by its session id, a
 * sub-agent by its session id and agent id (its lines carry its parent's session id).
 */
export const importedSessionId = (sessionId: string, agentId?: string) =>
  agentId ? `cc-${idPart(sessionId)}.${idPart(agentId)}` : `cc-${idPart(sessionId)}`;

/**
 * What identifies a source file across imports (it may have moved): its name, and for a
 * sub-agent's file the session folder it is in. Two sources with one id but different identities
 * collide.
 */
function identityOf(file: string, agentId: string | undefined): string {
  const parts = file.split(path.sep);
  const at = parts.lastIndexOf('subagents');
  const name = at >= 1 ? `${parts[at - 1]}/${parts.slice(at).join('/')}` : path.basename(file);
  return agentId ? `${name}#${agentId}` : name;
}

/** Two source files whose sessions would get one id: neither is written over the other. */
export class ImportIdCollisionError extends Error {
  readonly code = 'IMPORT_ID_COLLISION';
  constructor(
    readonly session: string,
    readonly first: string,
    readonly second: string,
  ) {
    super(
      `session ${session}: ${second} maps to the id of ${first}, imported as that session; rename one of the files to import both`,
    );
    this.name = 'ImportIdCollisionError';
  }
}

export async function importTranscripts(
  store: EventStore,
  paths: readonly string[],
  options: ImportOptions = {},
): Promise<ImportReport> {
  const { units, ignored, skipped } = await discoverTranscripts(paths, { skipDirs: options.skipDirs });
  const report: ImportReport = { sessions: [], ignored, skipped, failures: [] };
  const ctx: UnitContext = { store, options, report, ids: null, claimed: new Map() };
  for (const unit of units) await importUnit(ctx, unit);
  return report;
}

interface UnitContext {
  store: EventStore;
  options: ImportOptions;
  report: ImportReport;
  /** The store's session ids, read once when first needed (a kept transcript's inline sub-agents). */
  ids: Promise<string[]> | null;
  /** Ids this import has given out, with the source that got each. */
  claimed: Map<string, string>;
}

interface PriorImport {
  exists: boolean;
  complete: boolean;
  bytes: number | null;
  /** The stream's last seq (0 when it does not exist). */
  last: number;
}

/**
 * Whether `id` was imported before, and whether that import got to its end. A session with this
 * id that came from another source file (or from no import) is never touched.
 */
async function priorImport(
  ctx: UnitContext,
  id: string,
  source: { file: string; agentId?: string; shown: string },
): Promise<PriorImport> {
  const { store } = ctx;
  const first = ctx.claimed.get(id);
  if (first !== undefined && first !== source.shown)
    throw new ImportIdCollisionError(id, first, source.shown);
  ctx.claimed.set(id, source.shown);
  if (!(await store.exists(id))) return { exists: false, complete: false, bytes: null, last: 0 };
  let from: ImportedFrom | undefined;
  for await (const r of store.read(id, { toSeq: 1 })) {
    if (r.type === 'session.created') from = r.data.importedFrom;
  }
  if (!from) throw new ImportConflictError(id, 'a session with this id exists and was not imported');
  if (identityOf(from.file, from.agentId) !== identityOf(source.file, source.agentId)) {
    throw new ImportIdCollisionError(id, from.file, source.shown);
  }
  // More records than the import wrote is fine (a run resumed on it); fewer means it was cut short.
  const last = await store.lastSeq(id);
  return { exists: true, complete: last >= from.records, bytes: from.bytes, last };
}

async function importUnit(ctx: UnitContext, unit: TranscriptUnit): Promise<void> {
  const { store, options, report } = ctx;
  const parent: ParentSide = { session: importedSessionId(unit.sessionId), links: null, claimed: new Set() };
  let linksRead = false;
  let mainEntry: ImportedSession | null = null;
  if (unit.main) {
    const main = unit.main;
    mainEntry = await attempt(report, main, async () => {
      const prior = await priorImport(ctx, parent.session, { file: main, shown: main });
      const { transcript, mapped, entry } = await importOne(store, parent.session, main, prior, options, {});
      if (mapped) {
        parent.links = mapped.links;
        linksRead = true;
      }
      if (!transcript) {
        // Kept as it was: so are the sub-agents its file held inline, imported with it.
        ctx.ids ??= store.list().then((rows) => rows.map((r) => r.id));
        const prefix = `${importedSessionId(unit.sessionId, 'side-')}`;
        for (const id of (await ctx.ids).filter((x) => x.startsWith(prefix)).sort()) {
          const key = id.slice(prefix.length);
          const shown = `${main}#sidechain-${key}`;
          const prior = await priorImport(ctx, id, { file: main, agentId: key, shown });
          entry.children.push(await alreadyImported(id, shown, prior));
        }
      }
      if (transcript && mapped) {
        for (const side of transcript.sidechains) {
          const child = await attempt(report, `${main}#sidechain-${side.key}`, () =>
            importInlineSidechain(ctx, parent, unit.sessionId, main, transcript, side),
          );
          if (child) entry.children.push(child);
        }
      }
      return entry;
    });
    if (mainEntry) report.sessions.push(mainEntry);
  }
  for (const child of unit.children) {
    const entry = await attempt(report, child.file, async () => {
      const id = importedSessionId(unit.sessionId, child.agentId);
      const prior = await priorImport(ctx, id, {
        file: child.file,
        agentId: child.agentId,
        shown: child.file,
      });
      if (prior.complete && !options.force) return alreadyImported(id, child.file, prior);
      if (!linksRead && unit.main) {
        // The parent was imported before: its transcript is read again for the links only.
        parent.links = mapTranscript((await readTranscript(unit.main)).events).links;
        linksRead = true;
      }
      const meta = await readAgentMeta(child.meta);
      return (
        await importOne(store, id, child.file, prior, options, {
          asSidechain: true,
          agentId: child.agentId,
          title: meta?.description ?? (isCompactionAgent(child.agentId) ? 'compaction summary' : undefined),
          parent: (mapped) => linkChild(parent, { agentId: child.agentId, meta, mapped }),
        })
      ).entry;
    });
    if (!entry) continue;
    if (mainEntry) mainEntry.children.push(entry);
    else report.sessions.push(entry);
  }
}

/** Runs one transcript's import; a failure is reported and the others go on. */
async function attempt<T>(report: ImportReport, source: string, fn: () => Promise<T>): Promise<T | null> {
  try {
    return await fn();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    if (code === 'IMPORT_BUG') throw e;
    report.failures.push({ source, message: messageOf(e) });
    return null;
  }
}

/** An earlier complete import is kept; if the transcript changed since, the entry says so. */
async function alreadyImported(id: string, source: string, prior: PriorImport): Promise<ImportedSession> {
  const now = await stat(source.replace(/#sidechain-.*$/, '')).then(
    (s) => s.size,
    () => null,
  );
  return {
    sessionId: id,
    source,
    records: 0,
    transitions: 0,
    unmapped: 0,
    children: [],
    status: 'already imported',
    malformed: [],
    unmappedTypes: {},
    ...(prior.bytes !== null && now !== null && now !== prior.bytes
      ? { grown: { before: prior.bytes, now } }
      : {}),
  };
}

interface OneOptions {
  asSidechain?: boolean;
  agentId?: string;
  title?: string | undefined;
  parent?: (mapped: MappedTranscript) => ParentLink;
}

async function importOne(
  store: EventStore,
  id: string,
  file: string,
  prior: PriorImport,
  options: ImportOptions,
  one: OneOptions,
): Promise<{ transcript: Transcript | null; mapped: MappedTranscript | null; entry: ImportedSession }> {
  if (prior.complete && !options.force) {
    return { transcript: null, mapped: null, entry: await alreadyImported(id, file, prior) };
  }
  const transcript = await readTranscript(file, { asSidechain: one.asSidechain ?? false });
  const mapped = mapTranscript(transcript.events);
  const entry = await writeSession(store, id, prior, transcript, mapped, options, {
    ...one,
    parent: one.parent?.(mapped),
  });
  return { transcript, mapped, entry };
}

async function importInlineSidechain(
  ctx: UnitContext,
  parent: ParentSide,
  sessionId: string,
  main: string,
  transcript: Transcript,
  side: Transcript['sidechains'][number],
): Promise<ImportedSession> {
  const { store, options } = ctx;
  const id = importedSessionId(sessionId, `side-${side.key}`);
  const shown = `${main}#sidechain-${side.key}`;
  const prior = await priorImport(ctx, id, { file: main, agentId: side.key, shown });
  if (prior.complete && !options.force) return alreadyImported(id, shown, prior);
  const mapped = mapTranscript(side.events);
  const info = { ...transcript.info, title: null, lines: side.events.length };
  return writeSession(store, id, prior, { ...transcript, info }, mapped, options, {
    source: shown,
    agentId: side.key,
    parent: linkChild(parent, { agentId: side.key, meta: null, mapped }),
  });
}

async function writeSession(
  store: EventStore,
  id: string,
  prior: PriorImport,
  transcript: Transcript,
  mapped: MappedTranscript,
  options: ImportOptions,
  one: { agentId?: string; title?: string | undefined; parent?: ParentLink | undefined; source?: string },
): Promise<ImportedSession> {
  const { info } = transcript;
  const importedFrom: ImportedFrom = {
    format: 'claude-code',
    file: info.file,
    sessionId: info.sessionId ?? id,
    version: info.version,
    ...(one.agentId ? { agentId: one.agentId } : {}),
    bytes: info.bytes,
    records: mapped.drafts.length + 1,
    lines: {
      total: info.lines,
      bookkeeping: mapped.bookkeeping,
      unmapped: mapped.unmapped - mapped.malformed,
      malformed: mapped.malformed,
    },
  };
  const title = info.title ?? one.title;
  const created: DraftRecord = {
    type: 'session.created',
    run: null,
    at: mapped.firstAt ?? 0,
    data: {
      ...(title ? { title } : {}),
      ...(info.cwd ? { cwd: info.cwd } : {}),
      ...(one.parent ? { parent: one.parent } : {}),
      importedFrom,
    },
  };
  const redactor = defaultRedactor();
  // Validated here (as the store will): what is compared with an earlier import is what is stored.
  const records = [created, ...mapped.drafts].map((draft, i) =>
    validateRecord(
      {
        v: CURRENT_SCHEMA_VERSION,
        seq: i + 1,
        session: id,
        ...draft,
        // Redacted like every record the runtime writes (src/lib/secrets.ts): a transcript may hold the live key.
        data: redactor.redact(draft.data),
      },
      { session: id, file: info.file },
    ),
  );
  // Written whole (a temporary file linked or renamed into place): an import killed half-way leaves
  // nothing, or the earlier stream as it was — never a prefix that a resumed run could build on.
  if (!prior.exists) {
    await createWholeSession(store, id, records);
  } else {
    const lost = await recordsLost(store, id, prior.last, records);
    if (lost > 0 && !options.force)
      throw new ImportConflictError(
        id,
        `${lost} records in the store are not part of this import (a run resumed on it?): importing again would lose them — --force replaces them anyway; fork the session first to keep them`,
      );
    await replaceWholeSession(store, id, records, prior.last);
  }
  const malformed: ImportedSession['malformed'] = [];
  const unmappedTypes: Record<string, number> = {};
  for (const d of mapped.drafts) {
    if (d.type !== 'import.unmapped') continue;
    if (d.data.lineType === '(malformed)') malformed.push({ line: d.data.line, why: d.data.why });
    unmappedTypes[d.data.lineType] = (unmappedTypes[d.data.lineType] ?? 0) + 1;
  }
  return {
    sessionId: id,
    source: one.source ?? info.file,
    records: records.length,
    transitions: mapped.transitions,
    unmapped: mapped.unmapped,
    children: [],
    status: 'imported',
    malformed,
    unmappedTypes,
    ...(one.parent ? { parent: one.parent } : {}),
  };
}

/**
 * How many records of the stored session (last seq `last`) the new import would not write again:
 * those after the longest stretch, from seq 2, that it reproduces exactly (seq 1, the import's
 * header, is always rewritten: it counts the transcript's bytes). A cut-short import loses
 * nothing; a run resumed on it, or on a complete import, is lost.
 */
async function recordsLost(
  store: EventStore,
  id: string,
  last: number,
  records: readonly LogRecord[],
): Promise<number> {
  let same = 1;
  for await (const r of store.read(id, { fromSeq: 2 })) {
    const mine = records[r.seq - 1];
    if (
      !mine ||
      mine.type !== r.type ||
      mine.run !== r.run ||
      mine.at !== r.at ||
      !sameJson(mine.data, r.data)
    )
      break;
    same = r.seq;
  }
  return last - same;
}

export type { TranscriptLinks };
