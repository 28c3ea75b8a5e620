/**
 * The dashboards' ClickHouse: the one client (@trawl/clickhouse), made read-only and bounded.
 * Every query runs with `readonly=2` — a dashboard query that somehow carried a write would be
 * refused by the server — and with a server-side time limit, so a heavy range cannot hold a
 * connection for long; the client's deadline is a little above the server's, so the server's
 * message wins. 64-bit integers arrive as strings; callers convert with Number().
 */
import { checkDatabaseName, ClickHouse } from '@trawl/clickhouse';

/** Server-side `max_execution_time` of a dashboard query, seconds. */
const MAX_EXECUTION_SECONDS = 15;

export function dashboardReader(options: { readonly url: string; readonly database: string }): ClickHouse {
  return new ClickHouse({
    url: options.url,
    database: checkDatabaseName(options.database),
    settings: { readonly: '2', max_execution_time: String(MAX_EXECUTION_SECONDS) },
    timeoutMs: (MAX_EXECUTION_SECONDS + 5) * 1000,
  });
}
