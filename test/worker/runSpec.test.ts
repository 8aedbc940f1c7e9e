import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryEventStore } from '../../src/store/memoryStore.ts';
import { parseRunSpec, sessionOptionsFor } from '../../src/worker/runSpec.ts';

let cwd: string;
beforeAll(async () => {
  cwd = await mkdtemp(path.join(tmpdir(), 'reloop-spec-'));
});
afterAll(async () => {
  await rm(cwd, { recursive: true, force: true });
});

const base = {
  script: { file: 's.json', content: { turns: [{ text: 'ok' }] } },
  permissionMode: 'default',
  allow: [],
  deny: [],
  stopHook: [],
};

describe('a queued run spec', () => {
  it("carries the system prompt the submitter's flags made, as text", async () => {
    const spec = parseRunSpec('s1', { ...base, cwd, systemPrompt: 'You are terse.\n\nCite files.' });
    const options = await sessionOptionsFor(spec, { store: new MemoryEventStore() });
    expect(options.settings?.system).toBe('You are terse.\n\nCite files.');
    const plain = await sessionOptionsFor(parseRunSpec('s2', { ...base, cwd }), {
      store: new MemoryEventStore(),
    });
    expect(plain.settings?.system).toBeUndefined();
  });
});
