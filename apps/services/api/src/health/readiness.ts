/**
 * The API's readiness checks for `/readyz`: Postgres, Kafka, the schema registry and ClickHouse.
 * How checks run (in parallel, each with a deadline, errors redacted) is the services' shared
 * `runChecks` from @trawl/streams, and so is how a round is cached and shared (`ReadinessCache`).
 */
import { httpCheck, kafkaCheck, postgresCheck, type createKafka, type Endpoints, type ReadinessChecks } from '@trawl/streams';
import type { Pool } from '@trawl/store';

export { ReadinessCache, runChecks, type CheckResult, type ReadinessCheck, type ReadinessChecks } from '@trawl/streams';

export function defaultReadinessChecks(pool: Pool, kafka: ReturnType<typeof createKafka>, ep: Endpoints): ReadinessChecks {
  return {
    postgres: postgresCheck(pool),
    kafka: kafkaCheck(kafka),
    registry: httpCheck(`${ep.schemaRegistryUrl}/subjects`),
    clickhouse: httpCheck(`${ep.clickhouseUrl}/ping`),
  };
}
