import { stat } from 'node:fs/promises';
import { messageOf } from '../lib/errors.ts';
import { defaultRedactor } from '../lib/secrets.ts';
import {
  CURRENT_SCHEMA_VERSION,
  type DraftRecord,
  type ImportedFrom,
  type LogRecord,
  type ParentLink,
} from '../store/records.ts';
import type { EventStore } from '../store/types.ts';
import { isCompactionAgent, linkChild, type ParentSide, readAgentMeta } from './childLinks.ts';
import { type MappedTranscript, mapTranscript, type TranscriptLinks } from './claudeCode/mapTranscript.ts';
import { readTranscript, type Transcript } from './claudeCode/readTranscript.ts';
import { discoverTranscripts, type TranscriptUnit } from './discover.ts';

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
  /** Transcripts that could not be imported at all (unreadable, a store error): named, not fatal. */
  failures: { source: string; message: string }[];
}

export interface ImportOptions {
  /** Import again what was imported before (the earlier import is replaced). */
  force?: boolean;
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

/** Session ids are file names in the file store: anything else becomes `_`. */
const safe = (s: string) => s.replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * Deterministic ids, keyed by the source's identity: a transcript by its session id, a
 * sub-agent by its session id and agent id (its lines carry its parent's session id).
 */
export const importedSessionId = (sessionId: string, agentId?: string) =>
  agentId ? `cc-${safe(sessionId)}.${safe(agentId)}` : `cc-${safe(sessionId)}`;

/** Records appended per store call: bounds the write buffer, not the session. */
const APPEND_BATCH = 2_000;

export async function importTranscripts(
  store: EventStore,
  paths: readonly string[],
  options: ImportOptions = {},
): Promise<ImportReport> {
  const { units, ignored } = await discoverTranscripts(paths);
  const report: ImportReport = { sessions: [], ignored, failures: [] };
  const ctx: UnitContext = { store, options, report, ids: null };
  for (const unit of units) await importUnit(ctx, unit);
  return report;
}

interface UnitContext {
  store: EventStore;
  options: ImportOptions;
  report: ImportReport;
  /** The store's session ids, read once when first needed (a kept transcript's inline sub-agents). */
  ids: Promise<string[]> | null;
}

interface PriorImport {
  exists: boolean;
  complete: boolean;
  bytes: number | null;
  /** Records reloop added after the import (a run resumed on the imported session). */
  added: number;
}

/** Whether `id` was imported before, and whether that import got to its end. */
async function priorImport(store: EventStore, id: string): Promise<PriorImport> {
  if (!(await store.exists(id))) return { exists: false, complete: false, bytes: null, added: 0 };
  let from: ImportedFrom | undefined;
  for await (const r of store.read(id, { toSeq: 1 })) {
    if (r.type === 'session.created') from = r.data.importedFrom;
  }
  if (!from) throw new ImportConflictError(id, 'a session with this id exists and was not imported');
  // More records than the import wrote is fine (a run resumed on it); fewer means it was cut short.
  const last = await store.lastSeq(id);
  return {
    exists: true,
    complete: last >= from.records,
    bytes: from.bytes,
    added: Math.max(0, last - from.records),
  };
}

async function importUnit(ctx: UnitContext, unit: TranscriptUnit): Promise<void> {
  const { store, options, report } = ctx;
  const parent: ParentSide = { session: importedSessionId(unit.sessionId), links: null, claimed: new Set() };
  let linksRead = false;
  let mainEntry: ImportedSession | null = null;
  if (unit.main) {
    const main = unit.main;
    mainEntry = await attempt(report, main, async () => {
      const prior = await priorImport(store, parent.session);
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
          const prior = await priorImport(store, id);
          entry.children.push(
            await alreadyImported(id, `${main}#sidechain-${id.slice(prefix.length)}`, prior),
          );
        }
      }
      if (transcript && mapped) {
        for (const side of transcript.sidechains) {
          const child = await attempt(report, `${main}#sidechain-${side.key}`, () =>
            importInlineSidechain(store, parent, unit.sessionId, main, transcript, side, options),
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
      const prior = await priorImport(store, id);
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
  const entry = await writeSession(store, id, prior, transcript, mapped, {
    ...one,
    parent: one.parent?.(mapped),
  });
  return { transcript, mapped, entry };
}

async function importInlineSidechain(
  store: EventStore,
  parent: ParentSide,
  sessionId: string,
  main: string,
  transcript: Transcript,
  side: Transcript['sidechains'][number],
  options: ImportOptions,
): Promise<ImportedSession> {
  const id = importedSessionId(sessionId, `side-${side.key}`);
  const prior = await priorImport(store, id);
  if (prior.complete && !options.force) return alreadyImported(id, `${main}#sidechain-${side.key}`, prior);
  const mapped = mapTranscript(side.events);
  const info = { ...transcript.info, title: null, lines: side.events.length };
  return writeSession(store, id, prior, { ...transcript, info }, mapped, {
    source: `${main}#sidechain-${side.key}`,
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
  one: { agentId?: string; title?: string | undefined; parent?: ParentLink | undefined; source?: string },
): Promise<ImportedSession> {
  const { info } = transcript;
  if (prior.exists) {
    if (prior.added > 0)
      throw new ImportConflictError(
        id,
        `${prior.added} records were added after the import (a run resumed on it); importing again would lose them — fork it first, or remove it`,
      );
    if (!store.remove) throw new ImportConflictError(id, 'this store cannot replace a session (--force)');
    await store.remove(id);
  }
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
  let batch: LogRecord[] = [];
  let seq = 0;
  const redactor = defaultRedactor();
  const flush = async () => {
    await store.append(id, batch, { expectedSeq: seq - batch.length });
    batch = [];
  };
  for (const draft of [created, ...mapped.drafts]) {
    seq++;
    // Redacted like every record the runtime writes (src/lib/secrets.ts): a transcript may hold the live key.
    batch.push({
      v: CURRENT_SCHEMA_VERSION,
      seq,
      session: id,
      ...draft,
      data: redactor.redact(draft.data),
    } as LogRecord);
    if (batch.length >= APPEND_BATCH) await flush();
  }
  if (batch.length) await flush();
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
    records: seq,
    transitions: mapped.transitions,
    unmapped: mapped.unmapped,
    children: [],
    status: 'imported',
    malformed,
    unmappedTypes,
    ...(one.parent ? { parent: one.parent } : {}),
  };
}

export type { TranscriptLinks };
