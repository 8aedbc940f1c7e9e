import { readFileSync } from 'node:fs';

let version: string | undefined;

/**
 * From the package.json next to dist/ (or src/): one source for the version. `unknown` where
 * there is none (the sources compiled elsewhere, as the benchmarks are).
 */
export function packageVersion(): string {
  if (version === undefined) {
    try {
      version = String(
        JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version,
      );
    } catch {
      version = 'unknown';
    }
  }
  return version;
}
