/**
 * The consistency query of the analytics: per fact table, rows (FINAL), distinct events, and an
 * order-independent checksum of each event's content; per rollup, the merged rows and a checksum
 * of their merged values. Two databases built from the same positions give the same figures.
 *
 * An event stored twice (a copy re-emitted beyond the dedupe window, event-identity.ts) counts by
 * the smaller hash of its copies, the same in any database that holds the same rows, whatever
 * order its parts are read in.
 *
 * Left out on purpose: positions (a copy of an event at another offset is the same event) and
 * page facts' user_id (best effort: known only when the job's events were read first, which
 * depends on how the topics interleave).
 */
import { type ClickHouse, ident } from '@trawl/clickhouse';

export interface TableFigures {
  readonly rows: number;
  readonly events: number;
  readonly checksum: string;
}

export type AnalyticsChecksum = Readonly<Record<string, TableFigures>>;

const FACT_CONTENT: Readonly<Record<string, string>> = {
  page_fetches: 'event_id, job_id, fetch_id, host, url, status, bytes, fetch_ms, toString(render_mode), depth, ok, error_code, attempts, items, ts',
  items: 'event_id, job_id, fetch_id, item_key, host, url, ts',
  job_events: 'event_id, job_id, event, user_id, outcome, error_code, pages_fetched, pages_failed, items_extracted, ts',
};

const ROLLUPS: Readonly<Record<string, { key: string; values: string }>> = {
  pages_by_minute: {
    key: 'minute, host, status, ok, error_code, render_mode',
    values: 'uniqExactMerge(pages) AS a, sumMerge(bytes_sum) AS b, sumMerge(fetch_ms_sum) AS c, sumMerge(retries) AS d, toString(quantilesTimingMerge(0.5, 0.95, 0.99)(fetch_ms_quantiles)) AS e',
  },
  items_by_minute: { key: 'minute, host', values: 'uniqExactMerge(items) AS a' },
  job_events_by_minute: { key: 'minute, event, outcome, error_code', values: 'uniqExactMerge(events) AS a' },
  job_page_totals: {
    key: 'job_id, ok',
    values: 'uniqExactMerge(pages) AS a, sumMerge(bytes_sum) AS b, sumMerge(retries) AS c, minMerge(first_ts) AS d, maxMerge(last_ts) AS e, toString(quantilesTimingMerge(0.5, 0.95, 0.99)(fetch_ms_quantiles)) AS f',
  },
  job_item_totals: { key: 'job_id', values: 'uniqExactMerge(items) AS a' },
};

export async function analyticsChecksum(ch: ClickHouse, database: string = ch.database): Promise<AnalyticsChecksum> {
  const db = ident(database);
  const out: Record<string, TableFigures> = {};
  for (const [table, content] of Object.entries(FACT_CONTENT)) {
    const [r] = await ch.rows<{ rows: string; events: string; checksum: string }>(
      `SELECT (SELECT count() FROM ${db}.${ident(table)} FINAL) AS rows, count() AS events, toString(sum(h)) AS checksum
       FROM (SELECT event_id, min(cityHash64(${content})) AS h FROM ${db}.${ident(table)} GROUP BY event_id)`,
    );
    out[table] = { rows: Number(r!.rows), events: Number(r!.events), checksum: r!.checksum };
  }
  for (const [table, { key, values }] of Object.entries(ROLLUPS)) {
    const cols = values.split(/ AS (\w)/).filter((_, i) => i % 2 === 1);
    const [r] = await ch.rows<{ rows: string; checksum: string }>(
      `SELECT count() AS rows, toString(sum(cityHash64(${key.split(', ').map((k) => `toString(${k})`).join(', ')}, ${cols.join(', ')}))) AS checksum
       FROM (SELECT ${key}, ${values} FROM ${db}.${ident(table)} GROUP BY ${key})`,
    );
    out[table] = { rows: Number(r!.rows), events: Number(r!.rows), checksum: r!.checksum };
  }
  return out;
}

export function checksumDifferences(a: AnalyticsChecksum, b: AnalyticsChecksum): string[] {
  const tables = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...tables].filter((t) => JSON.stringify(a[t]) !== JSON.stringify(b[t]));
}
