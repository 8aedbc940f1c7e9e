import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  discoverTranscripts,
  ImportConflictError,
  ImportPathError,
  importedSessionId,
  importTranscripts,
} from '../../src/import/index.ts';
import { openFileStore } from '../../src/store/fileStore.ts';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import type { EventStore } from '../../src/store/types.ts';
import { Transcript, text } from '../support/claudeCodeTranscript.ts';
import { readLog } from '../support/logRecords.ts';
import { AGENT, FIXTURES, PROJECT, SID, subagentFile, transcriptFile } from './support/fixtures.ts';

async function created(store: EventStore, id: string) {
  for await (const r of store.read(id, { toSeq: 1 })) if (r.type === 'session.created') return r.data;
  throw new Error(`no session.created in ${id}`);
}

describe('finding transcripts', () => {
  it('reads a projects folder: every session, its sub-agents beside it, and nothing that is not a transcript', async () => {
    const { units, ignored } = await discoverTranscripts([FIXTURES]);
    expect(units.map((u) => u.sessionId)).toEqual(Object.values(SID).sort());
    const subagents = units.find((u) => u.sessionId === SID.subagents)!;
    expect(subagents.main).toBe(transcriptFile(SID.subagents));
    expect(subagents.children.map((c) => c.agentId).sort()).toEqual(
      [AGENT.explore, AGENT.byResult, AGENT.byPrompt, AGENT.suggestion].sort(),
    );
    expect(subagents.children.find((c) => c.agentId === AGENT.explore)!.meta).toMatch(/\.meta\.json$/);
    expect(ignored).toEqual([path.join(PROJECT, SID.subagents, 'subagents/workflows/wf_1/journal.jsonl')]);
  });

  it('brings a session’s sub-agents along when one transcript is named, and a session along with its sub-agent', async () => {
    const one = await discoverTranscripts([transcriptFile(SID.compaction)]);
    expect(one.units.map((u) => [u.main, u.children.map((c) => c.agentId)])).toEqual([
      [transcriptFile(SID.compaction), [AGENT.compact]],
    ]);
    const child = await discoverTranscripts([subagentFile(SID.subagents, AGENT.byPrompt)]);
    expect(child.units.map((u) => u.main)).toEqual([transcriptFile(SID.subagents)]);
  });

  it('says which path names nothing', async () => {
    await expect(discoverTranscripts(['/no/such/place'])).rejects.toThrow(ImportPathError);
    await expect(discoverTranscripts(['/no/such/place'])).rejects.toThrow(
      '/no/such/place: no such file or folder',
    );
  });
});

describe('sub-agents become child sessions linked to their parent', async () => {
  const store = new MemoryEventStore();
  await importTranscripts(store, [PROJECT]);
  const parent = importedSessionId(SID.subagents);
  const child = (agentId: string) => created(store, importedSessionId(SID.subagents, agentId));

  it('by the meta file beside the transcript (agent type and description too)', async () => {
    const data = await child(AGENT.explore);
    expect(data.parent).toEqual({ session: parent, run: 'r1', toolUseId: 'toolu_task_a', agent: 'Explore' });
    expect(data.title).toBe('List modules');
    expect(data.importedFrom).toMatchObject({ sessionId: SID.subagents, agentId: AGENT.explore });
  });

  it('by the progress lines that name the agent and its Task call', async () => {
    expect((await child(AGENT.byResult)).parent).toEqual({
      session: parent,
      run: 'r1',
      toolUseId: 'toolu_task_b',
      agent: 'general-purpose',
    });
  });

  it('by its prompt being the Task call’s prompt, when nothing else names it', async () => {
    expect((await child(AGENT.byPrompt)).parent?.toolUseId).toBe('toolu_task_c');
  });

  it('with a null toolUseId when no Task call started it', async () => {
    expect((await child(AGENT.suggestion)).parent).toEqual({
      session: parent,
      run: null,
      toolUseId: null,
      agent: 'prompt_suggestion',
    });
  });

  it('a compaction summariser to the compaction it produced', async () => {
    const data = await created(store, importedSessionId(SID.compaction, AGENT.compact));
    expect(data.parent).toMatchObject({ agent: 'compact', toolUseId: null, run: 'r1' });
    const seq = data.parent!.compaction!.seq;
    const target = (await readLog(store, importedSessionId(SID.compaction))).find((r) => r.seq === seq);
    expect(target?.type).toBe('compaction.finished');
    if (target?.type !== 'compaction.finished' || !target.data.ok) throw new Error('not a compaction');
    expect(target.data.summary).toContain('the user wants sum() fixed');
  });

  it('an inline sub-agent of an older transcript to the Task call whose prompt it answers', async () => {
    const id = importedSessionId(SID.inlineSidechain, 'side-00000000-000f-4000-8000-000000000001');
    const data = await created(store, id);
    expect(data.parent).toMatchObject({ toolUseId: 'toolu_in1', run: 'r1' });
    expect((await readLog(store, id)).filter((r) => r.type === 'tool.started')).toHaveLength(1);
  });
});

describe('importing again', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'reloop-import-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps what was imported: the same transcripts twice write nothing the second time', async () => {
    const store = await openFileStore(path.join(dir, 'store'));
    try {
      const first = await importTranscripts(store, [PROJECT]);
      const before = await store.list();
      const second = await importTranscripts(store, [PROJECT]);
      const flat = (r: typeof first) => r.sessions.flatMap((s) => [s, ...s.children]);
      expect(flat(first).every((s) => s.status === 'imported' && s.records > 0)).toBe(true);
      expect(flat(second).every((s) => s.status === 'already imported' && s.records === 0)).toBe(true);
      expect(flat(second).map((s) => s.sessionId)).toEqual(flat(first).map((s) => s.sessionId));
      expect(await store.list()).toEqual(before);
    } finally {
      await store.close();
    }
  });

  it('keys a sub-agent by its own file, not by the session id its lines carry', async () => {
    const store = new MemoryEventStore();
    const report = await importTranscripts(store, [transcriptFile(SID.subagents)]);
    const ids = report.sessions[0]!.children.map((c) => c.sessionId);
    expect(new Set(ids).size).toBe(4);
    expect(ids.every((id) => id.startsWith(`cc-${SID.subagents}.`))).toBe(true);
  });

  it('replaces an import with --force, children too', async () => {
    const store = await openFileStore(path.join(dir, 'store'));
    try {
      await importTranscripts(store, [transcriptFile(SID.subagents)]);
      const again = await importTranscripts(store, [transcriptFile(SID.subagents)], { force: true });
      expect(again.sessions[0]!.status).toBe('imported');
      expect(again.sessions[0]!.children.every((c) => c.status === 'imported')).toBe(true);
      const id = importedSessionId(SID.subagents);
      expect(await store.lastSeq(id)).toBe(again.sessions[0]!.records);
      expect((await store.list()).filter((s) => s.id.startsWith(`cc-${SID.subagents}`))).toHaveLength(5);
    } finally {
      await store.close();
    }
  });

  it('imports a sub-agent that appeared after its parent was imported, linked all the same', async () => {
    const project = path.join(dir, 'proj');
    await mkdir(project);
    await cp(transcriptFile(SID.subagents), path.join(project, `${SID.subagents}.jsonl`));
    const store = new MemoryEventStore();
    await importTranscripts(store, [project]);
    await cp(path.join(PROJECT, SID.subagents), path.join(project, SID.subagents), { recursive: true });
    const report = await importTranscripts(store, [project]);
    expect(report.sessions[0]!.status).toBe('already imported');
    const late = report.sessions[0]!.children.find((c) => c.sessionId.endsWith(AGENT.byPrompt))!;
    expect(late.status).toBe('imported');
    expect((await created(store, late.sessionId)).parent?.toolUseId).toBe('toolu_task_c');
  });

  it('imports again an import that was cut short (fewer records than it wrote)', async () => {
    const store = new MemoryEventStore();
    const id = importedSessionId(SID.tools);
    const first = await importTranscripts(store, [transcriptFile(SID.tools)]);
    const full = await readLog(store, id);
    const cut = new MemoryEventStore();
    await cut.append(id, full.slice(0, 10), { expectedSeq: 0 });
    const again = await importTranscripts(cut, [transcriptFile(SID.tools)]);
    expect(again.sessions[0]!.status).toBe('imported');
    expect(await cut.lastSeq(id)).toBe(first.sessions[0]!.records);
  });

  it('says when a kept import’s transcript has grown since', async () => {
    const file = path.join(dir, `${SID.tools}.jsonl`);
    const t = new Transcript({ sessionId: SID.tools });
    t.prompt('one');
    t.assistant([text('1')]);
    await writeFile(file, t.jsonl());
    const store = new MemoryEventStore();
    await importTranscripts(store, [file]);
    t.prompt('two');
    await writeFile(file, t.jsonl());
    const report = await importTranscripts(store, [file]);
    expect(report.sessions[0]!.grown).toEqual({
      before: expect.any(Number),
      now: Buffer.byteLength(t.jsonl()),
    });
  });

  it('keeps an imported session reloop has added runs to; --force replaces it (the person asked)', async () => {
    const store = new MemoryEventStore();
    const id = importedSessionId(SID.tools);
    await importTranscripts(store, [transcriptFile(SID.tools)]);
    const last = await store.lastSeq(id);
    await store.append(
      id,
      [{ v: 1, seq: last + 1, at: 0, session: id, run: 'x', type: 'abort.requested', data: {} }],
      { expectedSeq: last },
    );
    const plain = await importTranscripts(store, [transcriptFile(SID.tools)]);
    expect(plain.sessions[0]!.status).toBe('already imported');
    expect(await store.lastSeq(id)).toBe(last + 1);
    const forced = await importTranscripts(store, [transcriptFile(SID.tools)], { force: true });
    expect(forced.failures).toEqual([]);
    expect(await store.lastSeq(id)).toBe(last);
  });

  it('refuses to import again a cut-short import a run was resumed on (it would lose that run), naming --force', async () => {
    const store = new MemoryEventStore();
    const id = importedSessionId(SID.tools);
    await importTranscripts(store, [transcriptFile(SID.tools)]);
    const full = await readLog(store, id);
    const cut = new MemoryEventStore();
    await cut.append(id, full.slice(0, 10), { expectedSeq: 0 });
    await cut.append(
      id,
      [{ v: 1, seq: 11, at: 0, session: id, run: 'r_resumed', type: 'abort.requested', data: {} }],
      { expectedSeq: 10 },
    );
    const plain = await importTranscripts(cut, [transcriptFile(SID.tools)]);
    expect(plain.failures[0]!.message).toMatch(
      /1 records in the store are not part of this import .* --force replaces them anyway/,
    );
    expect(await cut.lastSeq(id)).toBe(11);
    await importTranscripts(cut, [transcriptFile(SID.tools)], { force: true });
    expect(await cut.lastSeq(id)).toBe(full.length);
  });

  it('a session with the id imported from another file is an id collision naming both files (issue 18, item 16)', async () => {
    // What the id scheme before gave `a b.jsonl` (`cc-a_b`), now met by `a_b.jsonl`.
    const file = path.join(dir, 'a_b.jsonl');
    const t = new Transcript({ sessionId: 'a_b' });
    t.prompt('one');
    t.assistant([text('1')]);
    await writeFile(file, t.jsonl());
    const store = new MemoryEventStore();
    const importedFrom = {
      format: 'claude-code' as const,
      file: '/old/projects/p/a b.jsonl',
      sessionId: 'a b',
      version: '2.1.0',
      bytes: 10,
      records: 1,
      lines: { total: 1, bookkeeping: {}, unmapped: 0, malformed: 0 },
    };
    await store.append(
      'cc-a_b',
      [
        {
          v: 2,
          seq: 1,
          at: 0,
          session: 'cc-a_b',
          run: null,
          type: 'session.created',
          data: { importedFrom },
        },
      ],
      { expectedSeq: 0 },
    );
    const report = await importTranscripts(store, [file], { force: true });
    expect(report.sessions).toEqual([]);
    expect(report.failures).toEqual([
      {
        source: file,
        message: `session cc-a_b: ${file} maps to the id of /old/projects/p/a b.jsonl, imported as that session; rename one of the files to import both`,
      },
    ]);
    expect(await store.lastSeq('cc-a_b')).toBe(1);
  });

  it('two files of one import that map to one id: the second is refused, naming both', async () => {
    // `a b` becomes `a_b-<hash of "a b">`; a file named exactly that takes the same id.
    const hash = createHash('sha256').update('a b').digest('hex').slice(0, 10);
    const spaced = path.join(dir, 'a b.jsonl');
    const literal = path.join(dir, `a_b-${hash}.jsonl`);
    for (const f of [spaced, literal]) {
      const t = new Transcript({ sessionId: path.basename(f, '.jsonl') });
      t.prompt('one');
      t.assistant([text('1')]);
      await writeFile(f, t.jsonl());
    }
    const report = await importTranscripts(new MemoryEventStore(), [dir]);
    expect(report.sessions.map((x) => x.source)).toEqual([spaced]);
    expect(report.failures).toEqual([
      {
        source: literal,
        message: `session cc-a_b-${hash}: ${literal} maps to the id of ${spaced}, imported as that session; rename one of the files to import both`,
      },
    ]);
  });

  it('the same transcript moved elsewhere is still the same source: kept', async () => {
    const a = path.join(dir, 'one', `${SID.tools}.jsonl`);
    const b = path.join(dir, 'two', `${SID.tools}.jsonl`);
    await mkdir(path.dirname(a), { recursive: true });
    await mkdir(path.dirname(b), { recursive: true });
    await cp(transcriptFile(SID.tools), a);
    await cp(transcriptFile(SID.tools), b);
    const store = new MemoryEventStore();
    await importTranscripts(store, [a]);
    const again = await importTranscripts(store, [b]);
    expect(again.failures).toEqual([]);
    expect(again.sessions[0]!.status).toBe('already imported');
  });

  it('never replaces a session it did not import', async () => {
    const store = new MemoryEventStore();
    const id = importedSessionId(SID.tools);
    await store.append(
      id,
      [{ v: 1, seq: 1, at: 0, session: id, run: null, type: 'session.created', data: {} }],
      { expectedSeq: 0 },
    );
    const report = await importTranscripts(store, [transcriptFile(SID.tools)], { force: true });
    expect(report.sessions).toEqual([]);
    expect(report.failures).toEqual([
      {
        source: transcriptFile(SID.tools),
        message: new ImportConflictError(id, 'a session with this id exists and was not imported').message,
      },
    ]);
  });
});

describe('malformed and unknown lines', async () => {
  const store = new MemoryEventStore();
  const report = await importTranscripts(store, [transcriptFile(SID.malformed)]);
  const entry = report.sessions[0]!;
  const unmapped = (await readLog(store, entry.sessionId)).flatMap((r) =>
    r.type === 'import.unmapped' ? [r.data] : [],
  );

  it('keeps every line it cannot map as import.unmapped, with its type and why, and counts it', () => {
    expect(entry.unmapped).toBe(unmapped.length);
    expect(unmapped.map((u) => [u.line, u.lineType, u.why.replace(/ \(.*\)$/, '')])).toEqual([
      [3, '(malformed)', 'not valid JSON'],
      [4, '(malformed)', 'not a JSON object'],
      [5, 'telepathy', 'unknown line type'],
      [6, 'system:quantum_flux', 'unknown system subtype'],
      [7, '(no type)', 'the line has no type'],
      [9, 'assistant', "content block of type mystery_block has no place in reloop's message schema"],
      [10, 'user', 'tool_result for toolu_nowhere, which no open tool_use asked for'],
      [11, 'system:compact_boundary', 'compact_boundary with no summary message after it'],
      [18, '(malformed)', 'not valid JSON'],
    ]);
    expect(unmapped[1]!.text).toBe('[1, 2, 3]');
  });

  it('maps a stop_hook_summary no finished response came before as the Stop hooks’ decision (issue 18, item 12)', async () => {
    const hooks = (await readLog(store, entry.sessionId)).filter((r) => r.type === 'hook.decided');
    expect(hooks[0]?.data).toMatchObject({ hook: 'Stop', decision: 'allow' });
  });

  it('names each malformed line by number, and the import goes on past it', () => {
    expect(entry.malformed.map((m) => m.line)).toEqual([3, 4, 18]);
    expect(entry.records).toBeGreaterThan(30);
  });

  it('records the counts in session.created.importedFrom', async () => {
    const from = (await created(store, entry.sessionId)).importedFrom!;
    expect(from.lines).toMatchObject({ total: 18, unmapped: 6, malformed: 3 });
    expect(from.records).toBe(entry.records);
  });
});
