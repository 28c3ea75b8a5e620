export { ClickHouse, JSON_64BIT, type ClickHouseOptions, type ExternalTable } from './clickhouse-client.ts';
export { checkDatabaseName, ident, quote, tsvDateTime, tsvField, uint } from './sql-text.ts';
export {
  ClickHouseError, ClickHouseQueryError, ClickHouseUnavailableError, isRetriableChCode,
} from './errors.ts';
