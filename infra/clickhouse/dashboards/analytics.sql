-- Trawl scrape analytics: the queries behind a dashboard (ClickHouse 18.16 and current).
-- Run against the analytics database (default `trawl`), e.g.
--   clickhouse-client --database trawl --multiquery < infra/clickhouse/dashboards/analytics.sql
-- Rollups hold aggregate states: always read them with the -Merge functions and GROUP BY.

-- Pages per minute and host, with bytes, fetch-time quantiles, failures and retries (last hour).
SELECT minute, host,
       uniqExactMerge(pages) AS pages_n,
       uniqExactMergeIf(pages, ok = 0) AS failed_n,
       sumMerge(bytes_sum) AS bytes_n,
       quantilesTimingMerge(0.5, 0.95, 0.99)(fetch_ms_quantiles) AS fetch_ms_p50_p95_p99,
       sumMerge(retries) AS retries_n
FROM pages_by_minute
WHERE minute >= now() - 3600
GROUP BY minute, host
ORDER BY minute, host;

-- Status-code mix (0 = no HTTP answer), last 24 hours.
SELECT status, uniqExactMerge(pages) AS pages_n
FROM pages_by_minute
WHERE minute >= now() - 86400
GROUP BY status
ORDER BY status;

-- Error kinds of failed fetches (each one a dead letter), last 24 hours.
SELECT error_code, uniqExactMerge(pages) AS pages_n
FROM pages_by_minute
WHERE minute >= now() - 86400 AND ok = 0
GROUP BY error_code
ORDER BY pages_n DESC;

-- Items per minute and host, last hour.
SELECT minute, host, uniqExactMerge(items) AS items_n
FROM items_by_minute
WHERE minute >= now() - 3600
GROUP BY minute, host
ORDER BY minute, host;

-- Jobs started, finished, failed and cancelled per minute, last 24 hours.
SELECT minute, event, outcome, error_code, uniqExactMerge(events) AS events_n
FROM job_events_by_minute
WHERE minute >= now() - 86400
GROUP BY minute, event, outcome, error_code
ORDER BY minute, event;

-- Per-job totals (the 50 most recent jobs by last page).
SELECT job_id,
       uniqExactMergeIf(pages, ok = 1) AS fetched_n,
       uniqExactMergeIf(pages, ok = 0) AS failed_n,
       sumMerge(bytes_sum) AS bytes_n,
       sumMerge(retries) AS retries_n,
       quantilesTimingMerge(0.5, 0.95, 0.99)(fetch_ms_quantiles) AS fetch_ms_p50_p95_p99,
       minMerge(first_ts) AS first_page,
       maxMerge(last_ts) AS last_page
FROM job_page_totals
GROUP BY job_id
ORDER BY last_page DESC
LIMIT 50;
