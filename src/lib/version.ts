import { readFileSync } from 'node:fs';

let version: string | undefined;

/** From the package.json next to dist/ (or src/): one source for the version. */
export function packageVersion(): string {
  version ??= String(
    JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
  );
  return version;
}
