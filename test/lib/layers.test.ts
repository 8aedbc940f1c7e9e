import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.ts';

/**
 * The folders of src/ are layers (README "What is where", docs/architecture.md "who knows what"):
 * the store knows no machine, the machine knows no store, tools know neither, and only the CLI
 * sits on top of everything. This test reads every import of src/** (static, `export … from` and
 * `import()`) and fails on one that crosses a layer the table below does not allow.
 *
 * A new folder needs a row here; a new edge between layers is a design change: add it to the table
 * in the same commit as the code, and to docs/architecture.md if it changes who knows what.
 */

const SRC = path.join(REPO_ROOT, 'src');

/** What each layer may import (besides itself). `cli` and the package entry may import anything. */
const MAY_IMPORT: Record<string, readonly string[] | 'anything'> = {
  lib: [],
  model: ['lib'],
  agents: ['lib'],
  settings: ['lib'],
  memory: ['lib', 'model', 'settings'],
  store: ['lib', 'model'],
  machines: ['lib', 'model'],
  tools: ['lib', 'model'],
  hooks: ['lib', 'model', 'tools'],
  mcp: ['lib', 'model', 'tools'],
  demo: ['lib', 'model'],
  otel: ['lib', 'model', 'store'],
  runtime: [
    'lib',
    'model',
    'agents',
    'memory',
    'store',
    'machines',
    'tools',
    'hooks',
    'mcp',
    'otel',
    'settings',
  ],
  viz: ['lib', 'model', 'store', 'machines'],
  import: ['lib', 'model', 'store', 'machines', 'viz'],
  replay: [
    'lib',
    'model',
    'agents',
    'memory',
    'store',
    'machines',
    'tools',
    'hooks',
    'mcp',
    'runtime',
    'viz',
  ],
  coverage: ['lib', 'model', 'store', 'machines', 'tools', 'hooks', 'runtime', 'viz'],
  serve: ['lib', 'model', 'store', 'viz', 'replay'],
  worker: ['lib', 'model', 'agents', 'store', 'tools', 'hooks', 'mcp', 'settings', 'runtime', 'replay'],
  testing: ['lib', 'model', 'agents', 'store', 'machines', 'tools', 'hooks', 'runtime', 'coverage', 'replay'],
  cli: 'anything',
  'index.ts': 'anything',
};

/**
 * Imports allowed only as `import type` (erased at compile time: no code of that layer loads).
 * machines/context.ts takes the RunConfig type from the store's record schemas.
 */
const MAY_IMPORT_TYPES: Record<string, readonly string[]> = {
  machines: ['store'],
};

interface LayerImport {
  /** The file, relative to src/. */
  file: string;
  /** The import as written. */
  spec: string;
  /** The layer it reaches (first folder under src/, or `index.ts`); undefined outside src/. */
  to: string | undefined;
  typeOnly: boolean;
}

function layerOf(relative: string): string {
  return relative.split('/')[0] as string;
}

/** The relative imports of one file of src/, each with the layer it reaches. */
function importsOf(file: string, text: string): LayerImport[] {
  const out: LayerImport[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const add = (spec: string, typeOnly: boolean) => {
    if (!spec.startsWith('.')) return; // a package
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
    const to = target.startsWith('../') ? undefined : layerOf(target);
    out.push({ file, spec, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.importClause?.isTypeOnly === true);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      add(node.arguments[0].text, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Why an import crosses the layering, or undefined when the table allows it. */
function violation(imp: LayerImport): string | undefined {
  const from = layerOf(imp.file);
  const to = imp.to;
  if (to === undefined || to === from) return undefined;
  const may = MAY_IMPORT[from];
  if (may === undefined) return `${imp.file}: src/${from} is not in the layer table of this test`;
  if (may === 'anything') return undefined;
  if (may.includes(to)) return undefined;
  if (imp.typeOnly && MAY_IMPORT_TYPES[from]?.includes(to)) return undefined;
  const typesToo = MAY_IMPORT_TYPES[from]?.includes(to) ? ' (only `import type` is allowed)' : '';
  return `${imp.file}: src/${from} imports src/${to} (${imp.spec})${typesToo}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

describe('layers of src/', () => {
  const imports = sourceFiles(SRC).flatMap((full) =>
    importsOf(path.relative(SRC, full).split(path.sep).join('/'), readFileSync(full, 'utf8')),
  );

  it('every import stays within what its layer may know', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports.map(violation).filter((v) => v !== undefined)).toEqual([]);
  });

  it('every folder of src/ has a row in the table', () => {
    const layers = new Set(imports.map((i) => layerOf(i.file)));
    expect([...layers].filter((l) => !(l in MAY_IMPORT))).toEqual([]);
  });

  it('the table is read as intended: the forbidden directions are refused', () => {
    const check = (file: string, text: string) => importsOf(file, text).map(violation);
    // The store knows no machine, runtime, CLI or viewer.
    for (const to of ['machines', 'runtime', 'cli', 'viz']) {
      expect(check('store/x.ts', `import { a } from '../${to}/a.ts';`)[0]).toMatch(/src\/store imports/);
    }
    // The machine knows no store (types aside), runtime or CLI.
    expect(check('machines/x.ts', `import { a } from '../store/a.ts';`)[0]).toMatch(/only `import type`/);
    expect(check('machines/x.ts', `import { type A } from '../store/a.ts';`)[0]).toMatch(
      /only `import type`/,
    );
    expect(check('machines/x.ts', `import type { A } from '../store/a.ts';`)).toEqual([undefined]);
    expect(check('machines/x.ts', `export { a } from '../runtime/a.ts';`)[0]).toMatch(/imports src\/runtime/);
    expect(check('machines/x.ts', `const m = await import('../cli/a.ts');`)[0]).toMatch(/imports src\/cli/);
    // Tools know no runtime or CLI, nested folders included.
    expect(check('tools/permissions/x.ts', `import { a } from '../../runtime/a.ts';`)[0]).toMatch(
      /src\/tools imports src\/runtime/,
    );
    expect(check('tools/builtin/x.ts', `import type { A } from '../../cli/a.ts';`)[0]).toMatch(
      /src\/tools imports src\/cli/,
    );
    // Within a layer, packages, and the CLI on top: allowed.
    expect(check('tools/builtin/x.ts', `import { a } from '../permissions/a.ts';`)).toEqual([undefined]);
    expect(check('store/x.ts', `import { z } from 'zod';`)).toEqual([]);
    expect(check('cli/x.ts', `import { a } from '../runtime/a.ts';`)).toEqual([undefined]);
    expect(check('newlayer/x.ts', `import { a } from '../lib/a.ts';`)[0]).toMatch(/not in the layer table/);
  });
});
