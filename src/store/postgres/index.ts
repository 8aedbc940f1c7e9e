export {
  openPostgresStore,
  PostgresEventStore,
  type PostgresStoreOptions,
  redactUrl,
  StoreUnavailableError,
} from './postgresStore.ts';
export { migrate, PG_SCHEMA_VERSION, StoreSchemaError } from './schema.ts';
