import { readdirSync, readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyReplay } from '../../src/replay/verify.ts';
import type { LogRecord } from '../../src/store/records.ts';
import { resealed } from '../../src/store/seal.ts';
import { parseRecordLine, validateRecord } from '../../src/store/validate.ts';
import { representativeLogs } from './support/representativeLogs.ts';

/*
 * Every single-record edit of a log is caught at or after that record. The edits are systematic:
 * every leaf field of every record (envelope, data, every nested value), one at a time — a number
 * +1, a string with a character added, a boolean flipped.
 *
 * - As written (v2 logs carry seals): verify reports exactly the edited record.
 * - Sealed anew after the edit (whoever edits on purpose can recompute the seals), and on the v1
 *   golden logs (which never had seals): re-deriving the derived records must catch every edit of
 *   a fact something is derived from, at or after it. What nothing derives from is listed in
 *   FACTS_NOTHING_DERIVES_FROM (and in docs/log-format.md): only the seals protect those.
 */

/** `type path` patterns (array indices as []) of facts whose edits only the seals can catch. */
const FACTS_NOTHING_DERIVES_FROM = [
  // when, and how long: the clock is a fact, never an input of a decision replay re-makes
  /^[a-z.]+ at$/,
  /^[a-z.]+ data\.durationMs$/,
  // what the session and its runs are called and where they ran
  /^session\.created data\.(title|cwd|forkedFrom\..+)$/,
  /^run\.started data\.config\.(system|model|fallbackModel|maxTurns|maxTransportAttempts|overloadsBeforeFallback|contextWindow|autoCompactThreshold|autoCompactBreaker|stopHookBlockCap|maxTokensRecoveries|escalatedMaxTokens|defaultMaxTokens)$/,
  // what the user and the tools said: the history holds it, nothing re-derives it
  /^user\.message data\.message\.content(\.\[\]\.text)?$/,
  /^tool\.finished data\.result\.content$/,
  // a tool call's input: the model's (in its response) and the one the tool ran with (a hook may
  // rewrite it; v1 logs it in tool.started, v2 only when it differs)
  /^model\.responded data\.response\.content\.\[\]\.input(\..+)?$/,
  /^tool\.started data\.input(\..+)?$/,
  /^tool\.finished data\.filesRead\.\[\]\..+$/,
  /^tool\.started data\.readOnly$/,
  // the model's words and the bookkeeping of its response
  /^model\.responded data\.response\.(id|model)$/,
  /^model\.responded data\.response\.content\.\[\]\.(text|thinking|signature)$/,
  /^model\.failed data\.failure\.(message|errorType|status|promptTokens|maxPromptTokens)$/,
  // an overload counts only towards a fallback model, when one is configured and reached
  /^model\.failed data\.failure\.overloaded$/,
  // the tail budget of a compaction (a setting): a change that does not move the cut changes nothing
  /^compaction\.finished data\.tailTokens$/,
  // how long a backoff waited (drawn from the random source)
  /^backoff\.scheduled data\.delayMs$/,
  // who decided, and why, when the decision itself is checked
  /^permission\.decided data\.(decision|by|message)$/,
  /^hook\.decided data\.(command|reason|source|matcher|systemMessage)$/,
  /^abort\.requested data\.reason$/,
  // a v1 compaction's max_tokens is not recorded anywhere else
  /^model\.requested data\.maxTokens$/,
  // what an MCP server said about itself and its tools (what the model was offered): only
  // readOnlyHint is derived from (tool.started readOnly), and a toolsFrom must resolve
  /^mcp\.server data\.(server|transport|source|serverInfo\.(name|version))$/,
  /^mcp\.server data\.tools\.\[\]\.(name|description|inputSchema\..+|annotations\.title)$/,
  // the CLAUDE.md memory a run read: what the model was given, nothing re-derives it
  /^memory\.loaded data\.(files\.\[\]\.(path|content|importedBy)|warnings\.\[\])$/,
  // what the run offered the model (its recorded setup): rerun and resume compare it with the
  // code of the day; replay never runs a tool, a rule or a hook, so nothing re-derives it
  /^run\.setup data\.(tools\.\[\]\.(name|description|inputSchema\..+)|hooks\.\[\]\..+|permissions\..+|mcpServers\.\[\]\..+|memory\.\[\]\..+|memoryFrom)$/,
];

type Path = (string | number)[];

function leaves(value: unknown, path: Path = []): Path[] {
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object') return [path];
  const out: Path[] = [];
  for (const [k, v] of Object.entries(value))
    out.push(...leaves(v, [...path, Array.isArray(value) ? Number(k) : k]));
  return out;
}

function edited(record: LogRecord, path: Path): LogRecord {
  const copy = structuredClone(record) as Record<string | number, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  const v = at[last];
  at[last] =
    typeof v === 'number' ? (Number.isInteger(v) ? v + 1 : v + 0.5) : typeof v === 'string' ? `${v}x` : !v;
  return copy as unknown as LogRecord;
}

const pattern = (r: LogRecord, path: Path) =>
  `${r.type} ${path.map((p) => (typeof p === 'number' ? '[]' : p)).join('.')}`;

function isValid(r: LogRecord): boolean {
  try {
    validateRecord(JSON.parse(JSON.stringify(r)));
    return true;
  } catch {
    return false;
  }
}

interface Outcome {
  edits: number;
  /** Edits the store would refuse to read (schema or version): caught at that record. */
  invalid: number;
  missed: string[];
  unprotected: Set<string>;
}

async function tamperEach(
  records: LogRecord[],
  check: (edit: LogRecord[], at: LogRecord, path: string) => Promise<'caught' | 'unprotected' | string>,
): Promise<Outcome> {
  const out: Outcome = { edits: 0, invalid: 0, missed: [], unprotected: new Set() };
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    for (const path of leaves(r)) {
      const t = edited(r, path);
      out.edits++;
      if (!isValid(t)) {
        out.invalid++;
        continue;
      }
      const log = records.slice();
      log[i] = t;
      const verdict = await check(log, t, pattern(r, path));
      if (verdict === 'unprotected') out.unprotected.add(pattern(r, path));
      else if (verdict !== 'caught') out.missed.push(`seq ${r.seq} ${pattern(r, path)}: ${verdict}`);
    }
  }
  return out;
}

/** As written: the seal of the edited record breaks, so verify names exactly that record. */
async function caughtBySeal(log: LogRecord[], at: LogRecord) {
  const d = (await verifyReplay(log)).divergence;
  if (!d) return 'not caught';
  return d.seq === at.seq ? 'caught' : `caught at ${d.seq}`;
}

/** Which entries of FACTS_NOTHING_DERIVES_FROM an edit that re-derivation let through matched. */
const listedAndSeen = new Set<RegExp>();

/** Sealed anew (or never sealed): re-derivation catches it at or after the record, or it is a listed fact. */
async function caughtByDerivation(log: LogRecord[], at: LogRecord, path: string) {
  const d = (await verifyReplay(log)).divergence;
  if (d && d.seq >= at.seq) return 'caught';
  if (d) return `caught before it, at ${d.seq}: ${d.detail}`;
  const listed = FACTS_NOTHING_DERIVES_FROM.find((p) => p.test(path));
  if (!listed) return 'not caught';
  listedAndSeen.add(listed);
  return 'unprotected';
}

describe('every single-record edit of a log is caught at or after that record', () => {
  let logs: Record<string, LogRecord[]>;
  beforeAll(async () => {
    logs = await representativeLogs();
  });

  const names = [
    'tools, retries, max_tokens, stop hook, two runs',
    'auto and reactive compaction',
    'denials, a tool error, refusal',
    'resume after a crash mid-batch, then max turns',
    'hooks: context, blocks, stops, SessionEnd',
    'MCP tools, a second process referring to the tool list',
    'CLAUDE.md memory with an import and a warning, two runs',
  ];

  it.each(names)('%s: the log verifies untouched, and every record is sealed', async (name) => {
    const report = await verifyReplay(logs[name]!);
    expect(report.divergence).toBeNull();
    expect(report.sealed).toBe(true);
  });

  it.each(names)('%s, as written: each edit is caught by the seal of the edited record', async (name) => {
    const out = await tamperEach(logs[name]!, caughtBySeal);
    expect(out.missed).toEqual([]);
    expect(out.edits).toBeGreaterThan(300);
  });

  it.each(
    names,
  )('%s, sealed anew: each edit of a derived-from fact is caught by re-derivation', async (name) => {
    const records = logs[name]!;
    const out = await tamperEach(records, (log, at, path) => caughtByDerivation(resealed(log), at, path));
    expect(out.missed).toEqual([]);
  });

  const golden = new URL('../fixtures/logs/', import.meta.url);
  const goldenLogs = readdirSync(golden).filter((f) => f.endsWith('.jsonl'));
  it.each(
    goldenLogs,
  )('v1 golden log %s: each edit of a derived-from fact is caught by re-derivation', async (file) => {
    const records = readFileSync(new URL(file, golden), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line, i) => parseRecordLine(line, { file, line: i + 1 }));
    const out = await tamperEach(records, caughtByDerivation);
    expect(out.missed).toEqual([]);
  });

  it('lists no fact as underived that re-derivation does catch (the list stays honest)', () => {
    expect(FACTS_NOTHING_DERIVES_FROM.filter((p) => !listedAndSeen.has(p)).map(String)).toEqual([]);
  });
});
