/** Opens (so creates or migrates) the PostgreSQL store at argv[2], then says `ok`. */
import { openPostgresStore } from '../../../../src/store/postgres/index.ts';

const store = await openPostgresStore(process.argv[2] ?? '');
await store.close();
process.stdout.write('ok\n');
