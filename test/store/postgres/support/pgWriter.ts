/**
 * A second (and third) process writing one existing session of a PostgreSQL store:
 *   node --import tsx pgWriter.ts <url> <session> <tag> <batches>
 * Appends `batches` batches of three user messages tagged `<tag> <batch> <i>`, each at the seq it
 * last read; a ConcurrencyError makes it re-read and try again. Reports one JSON line at the end:
 * { tag, written, conflicts }.
 */
import { ConcurrencyError } from '../../../../src/store/errors.ts';
import { openPostgresStore } from '../../../../src/store/postgres/index.ts';
import { StreamBuilder } from '../../support/records.ts';

const [url, session, tag, batchesRaw] = process.argv.slice(2);
if (!url || !session || !tag || !batchesRaw)
  throw new Error('usage: pgWriter.ts <url> <session> <tag> <batches>');
const store = await openPostgresStore(url, { maxConnections: 2 });
let conflicts = 0;
let written = 0;
while (written < Number(batchesRaw)) {
  const last = await store.lastSeq(session);
  const s = new StreamBuilder(session, { seq: last });
  const batch = [0, 1, 2].map((i) => s.user(`${tag} ${written} ${i}`));
  try {
    await store.append(session, batch, { expectedSeq: last });
    written++;
  } catch (e) {
    if (!(e instanceof ConcurrencyError)) throw e;
    conflicts++;
  }
}
await store.close();
process.stdout.write(`${JSON.stringify({ tag, written, conflicts })}\n`);
