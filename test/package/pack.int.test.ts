/**
 * reloop as a user installs it. A copy of the repository without dist/ is packed (`npm pack`
 * runs `prepare`, which builds dist/ from nothing), the tarball is installed into an empty
 * project, and there: `npx reloop --version`, `--help`, a scripted `run` then `replay --verify`,
 * a program importing `reloop` and `reloop/testing`, and a TypeScript file type-checked with
 * `tsc --noEmit` against the shipped `.d.ts`.
 *
 * No network: the project gets a lockfile made from the repository's (the tarball, then every
 * dependency that is not a dev one, with its resolved URL and integrity), so `npm ci --offline`
 * installs it from npm's cache alone — which `npm ci` of the repository has filled.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

const run = promisify(execFile);
const SLOW = 600_000;
/** What a clone has that is not the project's own: never copied. */
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'tmp', '.reloop', 'coverage']);

let work: string;
let consumer: string;
let tarball: string;

/** A command's output, or a failure carrying it (the message of a bare exec error says little). */
async function sh(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  try {
    return await run(cmd, args, {
      cwd,
      env: { ...process.env, npm_config_offline: 'true', npm_config_audit: 'false', ...env },
      maxBuffer: 64 * 1024 * 1024,
    });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; code?: number };
    throw new Error(`${cmd} ${args.join(' ')} (in ${cwd}) exited ${x.code}:\n${x.stdout}\n${x.stderr}`);
  }
}

/**
 * An empty project depending on the tarball, with a lockfile: resolving versions needs the
 * registry's metadata, which `npm ci` never caches; a lockfile that names every package's
 * tarball and integrity needs only the tarballs, which it does.
 */
async function writeConsumerProject(dir: string, tgz: string): Promise<void> {
  const lock = JSON.parse(await readFile(path.join(REPO_ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, Record<string, unknown> & { dev?: boolean }>;
  };
  const own = lock.packages['']!;
  const integrity = `sha512-${createHash('sha512')
    .update(await readFile(tgz))
    .digest('base64')}`;
  const packages: Record<string, unknown> = {
    '': { name: 'reloop-consumer', dependencies: { reloop: `file:${tgz}` } },
    'node_modules/reloop': {
      version: own.version,
      resolved: `file:${tgz}`,
      integrity,
      license: own.license,
      dependencies: own.dependencies,
      bin: own.bin,
      engines: own.engines,
    },
  };
  for (const [where, entry] of Object.entries(lock.packages)) {
    if (where.startsWith('node_modules/') && !entry.dev) packages[where] = entry;
  }
  const pkg = {
    name: 'reloop-consumer',
    private: true,
    type: 'module',
    dependencies: { reloop: `file:${tgz}` },
  };
  await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  await writeFile(
    path.join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: pkg.name, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`,
  );
}

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'reloop-pack-'));
  // A clean checkout: the sources, no dist/ (prepare must build it), the installed dev tools.
  const clone = path.join(work, 'clone');
  await cp(REPO_ROOT, clone, {
    recursive: true,
    filter: (src) => !NOT_COPIED.has(path.relative(REPO_ROOT, src).split(path.sep)[0]!),
  });
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(clone, 'node_modules'), 'dir');
  const packed = await sh('npm', ['pack', '--json', '--pack-destination', work], clone);
  const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string }[];
  tarball = path.join(work, info[0]!.filename);

  consumer = path.join(work, 'consumer');
  await mkdir(consumer);
  await writeConsumerProject(consumer, tarball);
  await sh('npm', ['ci', '--no-fund', '--no-audit'], consumer);
}, SLOW);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the compiled library, its types, the CLI and the demo project; no tests, no sources', async () => {
    const { stdout } = await sh('tar', ['-tzf', tarball], work);
    const files = stdout.split('\n').filter(Boolean);
    for (const f of [
      'package/bin/reloop.js',
      'package/dist/cli/main.js',
      'package/dist/index.js',
      'package/dist/index.d.ts',
      'package/dist/testing/index.js',
      'package/dist/testing/index.d.ts',
      'package/dist/otel/index.js',
      'package/dist/otel/index.d.ts',
      'package/src/demo/project/sum.js',
      'package/README.md',
    ]) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^package\/(test|bench|scripts|examples)\//.test(f))).toEqual([]);
    expect(files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'))).toEqual([]);
    expect(files).not.toContain('package/dist/.tsbuildinfo');
    // No TypeScript loader at run time.
    const pkg = JSON.parse((await sh('tar', ['-xzOf', tarball, 'package/package.json'], work)).stdout);
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
  });

  it(
    'npx reloop: --version, --help, a scripted run, and its replay verifies',
    async () => {
      const version = await sh('npx', ['reloop', '--version'], consumer);
      expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
      const help = await sh('npx', ['reloop', '--help'], consumer);
      expect(help.stdout).toContain('Usage: reloop');
      for (const cmd of ['run', 'sessions', 'log', 'replay', 'fork', 'viz', 'coverage', 'paths'])
        expect(help.stdout).toContain(cmd);

      await writeFile(
        path.join(consumer, 'script.json'),
        JSON.stringify({
          turns: [
            {
              content: [{ type: 'tool_use', id: 'toolu_1', name: 'Glob', input: { pattern: '*.json' } }],
              stop_reason: 'tool_use',
            },
            { text: 'There is a package.json.' },
          ],
        }),
      );
      const r = await sh(
        'npx',
        ['reloop', 'run', '--script', 'script.json', '--json', 'What is here?'],
        consumer,
      );
      const result = JSON.parse(r.stdout) as { sessionId: string; status: string; turns: number };
      expect(result).toMatchObject({ status: 'completed', turns: 2 });
      const v = await sh('npx', ['reloop', 'replay', result.sessionId, '--verify', '--json'], consumer);
      expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, divergence: null });
      expect(await readdir(path.join(consumer, '.reloop', 'sessions'))).toContain(
        `${result.sessionId}.jsonl`,
      );
    },
    SLOW,
  );

  it(
    'a program imports reloop and reloop/testing and runs a session',
    async () => {
      await writeFile(
        path.join(consumer, 'paths.mjs'),
        `import { queryLoopMachine } from 'reloop';
import { coverageOf, runSession, scriptedModel, text } from 'reloop/testing';
const { result, reasons, records } = await runSession({ model: scriptedModel([text('hi')]), prompt: 'hello' });
console.log(JSON.stringify({ id: queryLoopMachine.id, status: result.status, reasons, covered: coverageOf(records).reasons.covered }));
`,
      );
      const { stdout } = await sh('node', ['paths.mjs'], consumer);
      const out = JSON.parse(stdout);
      expect(out.status).toBe('completed');
      expect(out.reasons.at(-1)).toBe('completed');
      expect(out.covered).toContain('completed');
      expect(typeof out.id).toBe('string');
    },
    SLOW,
  );

  it(
    'a TypeScript file using reloop and reloop/testing type-checks against the shipped types',
    async () => {
      await writeFile(
        path.join(consumer, 'agent.test.ts'),
        `import { MemoryEventStore, type RunResult, type Tool } from 'reloop';
import { apiError, type CoverageReport, coverageOf, reasonsOf, runSession, scriptedModel, text, toolUse } from 'reloop/testing';
import { z } from 'zod';

const add: Tool<{ a: number; b: number }> = {
  name: 'add',
  description: 'Adds two numbers.',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  isReadOnly: true,
  isConcurrencySafe: () => true,
  async call({ a, b }) {
    return { content: String(a + b) };
  },
};

export async function check(): Promise<CoverageReport> {
  const model = scriptedModel([toolUse('add', { a: 1, b: 2 }), apiError(529, 'overloaded_error', 'busy'), text('3')]);
  const run = await runSession({ model, prompt: '1 + 2?', tools: [add], store: new MemoryEventStore() });
  const result: RunResult = run.result;
  const reasons: string[] = reasonsOf(run.records);
  const turns: number = result.turns;
  // @ts-expect-error text() takes a string: the shipped types are real, not any
  text(42);
  // @ts-expect-error runSession needs a prompt
  await runSession({ model });
  const report = coverageOf([run.records]);
  const covered: number = report.edges.covered + turns + reasons.length;
  void covered;
  return report;
}
`,
      );
      await writeFile(
        path.join(consumer, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module: 'NodeNext',
            moduleResolution: 'NodeNext',
            strict: true,
            noEmit: true,
            skipLibCheck: true,
            types: ['node'],
            typeRoots: [path.join(REPO_ROOT, 'node_modules', '@types')],
          },
          files: ['agent.test.ts'],
        }),
      );
      const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
      // zod comes with reloop (a dependency): a user's own project would add it to theirs.
      await sh(process.execPath, [tsc, '-p', 'tsconfig.json'], consumer);
    },
    SLOW,
  );
});
