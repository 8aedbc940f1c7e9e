export { redactUrl } from '../redactUrl.ts';
export {
  openPostgresStore,
  PostgresEventStore,
  type PostgresStoreOptions,
  StoreUnavailableError,
} from './postgresStore.ts';
export { migrate, PG_SCHEMA_VERSION, StoreSchemaError } from './schema.ts';
