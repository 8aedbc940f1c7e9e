#!/usr/bin/env node
// Runs the compiled CLI. `dist/` is built from `src/` by `npm run build`, which the `prepare`
// script runs on `npm ci`, `npm pack` and a git install; no TypeScript loader at run time.
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write(
    'reloop: the compiled CLI is missing (dist/cli/main.js): run `npm run build` in the reloop checkout\n',
  );
  process.exit(2);
}
await import(main.href);
