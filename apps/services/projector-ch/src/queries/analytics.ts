/**
 * The analytics a dashboard (or the API) asks for, read from the rollups with their -Merge
 * functions, and per-job totals from both the rollups and, deduplicated by event id, the facts.
 * Times are DateTime (seconds); `since`/`until` bound the minute. Values are quoted, never spliced.
 */
import { type ClickHouse, quote, tsvDateTime } from '@trawl/clickhouse';

export interface TimeRange {
  readonly since?: Date;
  readonly until?: Date;
}

function minuteFilter({ since, until }: TimeRange): string {
  const parts = ['1'];
  if (since) parts.push(`minute >= toDateTime(${tsvDateTime(since)})`);
  if (until) parts.push(`minute < toDateTime(${tsvDateTime(until)})`);
  return parts.join(' AND ');
}

export interface MinutePages {
  minute: string;
  host: string;
  pages: number;
  failed: number;
  bytes: number;
  p50: number;
  p95: number;
  p99: number;
  retries: number;
}

/** Pages per minute and host, with bytes, fetch-time quantiles, failures (= dead letters) and retries. */
export async function pagesPerMinute(ch: ClickHouse, range: TimeRange = {}, host?: string): Promise<MinutePages[]> {
  const hostFilter = host ? ` AND host = ${quote(host)}` : '';
  const rows = await ch.rows<Record<string, unknown>>(`
    SELECT toString(minute) AS m, host,
           uniqExactMerge(pages) AS n,
           uniqExactMergeIf(pages, ok = 0) AS failed,
           sumMerge(bytes_sum) AS bytes,
           quantilesTimingMerge(0.5, 0.95, 0.99)(fetch_ms_quantiles) AS q,
           sumMerge(retries) AS retried
    FROM pages_by_minute WHERE ${minuteFilter(range)}${hostFilter}
    GROUP BY minute, host ORDER BY minute, host`);
  return rows.map((r) => {
    const q = r.q as number[];
    return { minute: String(r.m), host: String(r.host), pages: Number(r.n), failed: Number(r.failed), bytes: Number(r.bytes), p50: q[0]!, p95: q[1]!, p99: q[2]!, retries: Number(r.retried) };
  });
}

/** How many pages answered with each status (0: no answer). */
export async function statusMix(ch: ClickHouse, range: TimeRange = {}): Promise<{ status: number; pages: number }[]> {
  const rows = await ch.rows<{ status: number; n: string }>(`
    SELECT status, uniqExactMerge(pages) AS n FROM pages_by_minute WHERE ${minuteFilter(range)}
    GROUP BY status ORDER BY status`);
  return rows.map((r) => ({ status: Number(r.status), pages: Number(r.n) }));
}

/** Failed fetches by error code. */
export async function errorKinds(ch: ClickHouse, range: TimeRange = {}): Promise<{ error_code: string; pages: number }[]> {
  const rows = await ch.rows<{ error_code: string; n: string }>(`
    SELECT error_code, uniqExactMerge(pages) AS n FROM pages_by_minute WHERE ${minuteFilter(range)} AND ok = 0
    GROUP BY error_code ORDER BY n DESC, error_code`);
  return rows.map((r) => ({ error_code: r.error_code, pages: Number(r.n) }));
}

export async function itemsPerMinute(ch: ClickHouse, range: TimeRange = {}): Promise<{ minute: string; host: string; items: number }[]> {
  const rows = await ch.rows<{ m: string; host: string; n: string }>(`
    SELECT toString(minute) AS m, host, uniqExactMerge(items) AS n FROM items_by_minute WHERE ${minuteFilter(range)}
    GROUP BY minute, host ORDER BY minute, host`);
  return rows.map((r) => ({ minute: r.m, host: r.host, items: Number(r.n) }));
}

/** Retries (attempts beyond the first) and dead-lettered fetches (PageFailed) over a range. */
export async function retriesAndDeadLetters(ch: ClickHouse, range: TimeRange = {}): Promise<{ retries: number; deadLettered: number }> {
  const [r] = await ch.rows<{ retried: string; dlq: string }>(`
    SELECT sumMerge(retries) AS retried, uniqExactMergeIf(pages, ok = 0) AS dlq FROM pages_by_minute WHERE ${minuteFilter(range)}`);
  return { retries: Number(r?.retried ?? 0), deadLettered: Number(r?.dlq ?? 0) };
}

export interface JobTotals {
  job_id: string;
  pages_fetched: number;
  pages_failed: number;
  bytes: number;
  items: number;
  retries: number;
}

/** Per-job totals from the rollups. */
export async function jobTotals(ch: ClickHouse, jobIds?: readonly string[]): Promise<JobTotals[]> {
  const filter = jobIds ? `WHERE job_id IN (${jobIds.map(quote).join(', ') || "''"})` : '';
  const pages = await ch.rows<{ job_id: string; ok: number; n: string; bytes: string; retried: string }>(`
    SELECT job_id, ok, uniqExactMerge(pages) AS n, sumMerge(bytes_sum) AS bytes, sumMerge(retries) AS retried
    FROM job_page_totals ${filter} GROUP BY job_id, ok`);
  const items = await ch.rows<{ job_id: string; n: string }>(`SELECT job_id, uniqExactMerge(items) AS n FROM job_item_totals ${filter} GROUP BY job_id`);
  const out = new Map<string, JobTotals>();
  const of = (id: string) => out.get(id) ?? out.set(id, { job_id: id, pages_fetched: 0, pages_failed: 0, bytes: 0, items: 0, retries: 0 }).get(id)!;
  for (const r of pages) {
    const t = of(r.job_id);
    if (Number(r.ok) === 1) t.pages_fetched += Number(r.n);
    else t.pages_failed += Number(r.n);
    t.bytes += Number(r.bytes);
    t.retries += Number(r.retried);
  }
  for (const r of items) of(r.job_id).items = Number(r.n);
  return [...out.values()].sort((a, b) => a.job_id.localeCompare(b.job_id));
}

/** Per-job totals from the facts, one row per event id: what the rollups must agree with. */
export async function jobTotalsFromFacts(ch: ClickHouse): Promise<JobTotals[]> {
  // Aliases differ from column names on purpose: 18.16 resolves a name to an alias of the same SELECT first.
  const pages = await ch.rows<{ job_id: string; fetched: string; failed: string; bytes_ok: string; retried: string }>(`
    SELECT j AS job_id, countIf(k = 1) AS fetched, countIf(k = 0) AS failed, sumIf(b, k = 1) AS bytes_ok, sum(greatest(a, 1) - 1) AS retried
    FROM (SELECT event_id, any(job_id) AS j, any(ok) AS k, any(bytes) AS b, any(attempts) AS a FROM page_fetches GROUP BY event_id)
    GROUP BY j`);
  const items = await ch.rows<{ job_id: string; n: string }>(`SELECT job_id, uniqExact(event_id) AS n FROM items GROUP BY job_id`);
  const out = new Map<string, JobTotals>();
  for (const r of pages) out.set(r.job_id, { job_id: r.job_id, pages_fetched: Number(r.fetched), pages_failed: Number(r.failed), bytes: Number(r.bytes_ok), items: 0, retries: Number(r.retried) });
  for (const r of items) (out.get(r.job_id) ?? out.set(r.job_id, { job_id: r.job_id, pages_fetched: 0, pages_failed: 0, bytes: 0, items: 0, retries: 0 }).get(r.job_id)!).items = Number(r.n);
  return [...out.values()].sort((a, b) => a.job_id.localeCompare(b.job_id));
}
