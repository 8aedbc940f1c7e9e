import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseScript } from '../../src/model/script.ts';
import { ScriptedModelClient } from '../../src/model/scripted.ts';
import { counterIds, VirtualClock } from '../../src/runtime/determinism.ts';
import { Session } from '../../src/runtime/session.ts';
import { InvalidRecordError } from '../../src/store/errors.ts';
import { openFileStore } from '../../src/store/fileStore.ts';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const model = () => new ScriptedModelClient(parseScript({ turns: [{ text: 'done' }, { text: 'again' }] }));

describe('a completed run whose last line was corrupted after it was written', () => {
  it('is reported as corruption naming the file and line, never cut and resumed as interrupted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reloop-corrupt-'));
    dirs.push(dir);
    const store = await openFileStore(dir, { onWarning: () => undefined });
    const session = await Session.create({
      store,
      model: model(),
      clock: new VirtualClock(),
      ids: counterIds(),
    });
    expect((await session.submit('go')).status).toBe('completed');
    await store.close();

    const file = join(dir, 'sessions', `${session.id}.jsonl`);
    const lines = (await readFile(file, 'utf8')).split('\n');
    const last = lines.length - 1; // lines[last] is '' after the final newline
    expect(JSON.parse(lines[last - 1]!).type).toBe('run.ended');
    // One byte of the fully written, fsync'd run.ended goes bad; its newline is intact.
    lines[last - 1] = lines[last - 1]!.replace('"run.ended"', '"run.ended"}');
    const corrupted = lines.join('\n');
    await writeFile(file, corrupted);

    const again = await openFileStore(dir, { onWarning: () => undefined });
    const err = await Session.open(session.id, { store: again, model: model() }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidRecordError);
    expect((err as Error).message).toContain(`${file}, line ${last}`);
    await expect(again.openWriter(session.id)).rejects.toBeInstanceOf(InvalidRecordError);
    await again.close();
    expect(await readFile(file, 'utf8')).toBe(corrupted);
  });
});
