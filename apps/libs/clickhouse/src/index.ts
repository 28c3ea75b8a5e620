export { ClickHouse, JSON_64BIT, type ClickHouseOptions, type ExternalTable } from './clickhouse-client.ts';
export { checkDatabaseName, ident, quote, tsvDateTime, tsvField, uint } from './sql-text.ts';
export {
  ClickHouseError, ClickHouseQueryError, ClickHouseUnavailableError, DEFAULT_CLICKHOUSE_ERRORS, isRetriableChCode, type ClickHouseErrors,
} from './errors.ts';
