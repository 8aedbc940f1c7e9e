import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Adapter } from 'lowdb';
import { PRIVATE_FILE } from '../lib/privateModes.ts';

export { PRIVATE_DIR, PRIVATE_FILE } from '../lib/privateModes.ts';

/**
 * lowdb's JSON file adapter, written private: each write goes to a temporary file created 0600 and
 * renamed into place (steno, lowdb's writer, creates it with the default mode). Writes are queued,
 * so two flushes never interleave.
 */
export class PrivateJsonFile<T> implements Adapter<T> {
  private queue: Promise<void> = Promise.resolve();
  private readonly temp: string;

  constructor(private readonly file: string) {
    this.temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  }

  async read(): Promise<T | null> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as T;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw e;
    }
  }

  write(data: T): Promise<void> {
    const text = JSON.stringify(data, null, 2);
    const next = this.queue.then(async () => {
      await writeFile(this.temp, text, { mode: PRIVATE_FILE });
      await rename(this.temp, this.file);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }
}
