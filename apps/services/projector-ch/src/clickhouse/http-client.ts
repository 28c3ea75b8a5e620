/**
 * The shared ClickHouse client (@trawl/clickhouse), failing with this package's error classes:
 * the flusher and the replay retry what is `retriable` among ProjectorChErrors, and the catalogue
 * (CH_UNAVAILABLE, CH_QUERY) is this package's.
 */
import { ClickHouse as SharedClickHouse, type ClickHouseErrors, type ClickHouseOptions } from '@trawl/clickhouse';
import { ClickHouseQueryError, ClickHouseUnavailableError } from '../errors.ts';

export { JSON_64BIT, type ClickHouseOptions, type ExternalTable } from '@trawl/clickhouse';

const PROJECTOR_CH_ERRORS: ClickHouseErrors = {
  unavailable: (message, cause) => new ClickHouseUnavailableError(message, cause === undefined ? undefined : { cause }),
  refused: (message, chCode, retriable) => new ClickHouseQueryError(message, chCode, retriable),
};

export class ClickHouse extends SharedClickHouse {
  constructor(options: ClickHouseOptions) {
    super({ errors: PROJECTOR_CH_ERRORS, ...options });
  }
}
