/**
 * `reloop viz` as a user runs it (a child process on a real file store): formats, taken edges,
 * the HTML file, and the exit codes for bad usage (2), an unknown session and a broken log (1).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import parseDot from 'dotparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFileStore } from '../../src/store/fileStore.ts';
import { onlyJson, runCli } from '../support/cli.ts';
import { interestingSession } from './vizSessions.ts';

const SLOW = 120_000;
let root: string;
let store: string;
let id: string;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'reloop-viz-'));
  store = path.join(root, 'store');
  const fileStore = await openFileStore(store);
  try {
    id = (await interestingSession(fileStore)).id;
  } finally {
    await fileStore.close();
  }
}, SLOW);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const viz = (...args: string[]) => runCli(['viz', ...args], { cwd: root, timeoutMs: SLOW });

describe('reloop viz', () => {
  it(
    'prints the chart as Mermaid by default and as DOT on request, no session needed',
    async () => {
      const mmd = await viz();
      expect(mmd.code, mmd.stderr).toBe(0);
      expect(mmd.stdout).toMatch(/^stateDiagram-v2\n/);
      expect(mmd.stdout).toContain('requesting --> recovering : transport_retry\n');
      expect(mmd.stdout).toContain('direction LR');
      expect(mmd.stdout).toContain('requesting --> failed : 7 reasons\n');
      const dot = await viz('--format', 'dot');
      expect(dot.code).toBe(0);
      expect(() => parseDot(dot.stdout)).not.toThrow();
    },
    SLOW,
  );

  it(
    'keeps every edge with --view full; refuses a view it does not know',
    async () => {
      const full = await viz('--view', 'full');
      expect(full.code, full.stderr).toBe(0);
      expect(full.stdout).toContain('requesting --> failed : refused\n');
      expect(full.stdout).toContain('requesting --> failed : budget_exhausted\n');
      expect(full.stdout).not.toContain(' 7 reasons');
      const bad = await viz('--view', 'tiny');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('Allowed choices are overview, full');
    },
    SLOW,
  );

  it(
    'marks the edges a session took',
    async () => {
      const r = await viz(id, '--store', store, '--format', 'dot');
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('label="transport_retry ×1"');
      expect(r.stdout).toContain('label="queryLoop: session s1"');
      const json = onlyJson<{ edges: { reason: string; count: number }[] }>(
        await viz(id, '--store', store, '--json'),
      );
      expect(json.edges.find((e) => e.reason === 'auto_compact')?.count).toBe(1);
    },
    SLOW,
  );

  it(
    'writes the session viewer with --format html --out',
    async () => {
      const file = path.join(root, 'session.html');
      const r = await viz(id, '--store', store, '--format', 'html', '--out', file);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain(`wrote ${file}`);
      const html = await readFile(file, 'utf8');
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toContain('id="reloop-data"');
      expect(html).toContain('id="reloop-chunk-0"');
      expect(html).not.toContain('id="reloop-chunk-1"');
    },
    SLOW,
  );

  it(
    'exits 2 on bad usage: html without a session, an unknown format',
    async () => {
      const html = await viz('--format', 'html');
      expect(html.code).toBe(2);
      expect(html.stderr).toContain('--format html needs a session');
      const svg = await viz('--format', 'svg');
      expect(svg.code).toBe(2);
      expect(svg.stderr).toContain('Allowed choices are mermaid, dot, html');
    },
    SLOW,
  );

  it(
    'exits 1 naming the session when it does not exist',
    async () => {
      const r = await viz('nope', '--store', store);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('no session with id "nope" [SESSION_NOT_FOUND]');
      expect(r.stdout).toBe('');
    },
    SLOW,
  );

  it(
    'exits 1 with file and line on a corrupt log or a schema version it cannot read',
    async () => {
      const file = path.join(store, 'sessions', `${id}.jsonl`);
      const good = await readFile(file, 'utf8');
      const lines = good.split('\n');
      try {
        await writeFile(file, [...lines.slice(0, 4), '{"v":1,"seq":5,"broken', ...lines.slice(5)].join('\n'));
        const corrupt = await viz(id, '--store', store, '--format', 'html');
        expect(corrupt.code).toBe(1);
        expect(corrupt.stderr).toMatch(/line 5/);
        expect(corrupt.stderr).toContain(file);
        expect(corrupt.stdout).toBe('');

        const v99 = lines.map((l, i) => (i === 2 ? l.replace(/"v":\d+,/, '"v":99,') : l));
        await writeFile(file, v99.join('\n'));
        const version = await viz(id, '--store', store);
        expect(version.code).toBe(1);
        expect(version.stderr).toMatch(/unsupported schema version 99 .* line 3/);
      } finally {
        await writeFile(file, good);
      }
    },
    SLOW,
  );
});
