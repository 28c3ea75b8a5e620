-- Trawl analytics, projection version 2: the materialised views from facts to rollups.
-- Kept in their own file because a replay's swap drops and recreates exactly these.

CREATE MATERIALIZED VIEW IF NOT EXISTS pages_by_minute_mv TO pages_by_minute AS
SELECT
    toStartOfMinute(ts) AS minute, host, status, ok, error_code, render_mode,
    uniqExactState(event_id) AS pages,
    sumState(bytes) AS bytes_sum,
    quantilesTimingState(0.5, 0.95, 0.99)(fetch_ms) AS fetch_ms_quantiles,
    sumState(toUInt64(fetch_ms)) AS fetch_ms_sum,
    sumState(toUInt64(greatest(attempts, 1) - 1)) AS retries
FROM page_fetches
GROUP BY minute, host, status, ok, error_code, render_mode;

CREATE MATERIALIZED VIEW IF NOT EXISTS items_by_minute_mv TO items_by_minute AS
SELECT toStartOfMinute(ts) AS minute, host, uniqExactState(event_id) AS items
FROM items
GROUP BY minute, host;

CREATE MATERIALIZED VIEW IF NOT EXISTS job_events_by_minute_mv TO job_events_by_minute AS
SELECT toStartOfMinute(ts) AS minute, event, outcome, error_code, uniqExactState(event_id) AS events
FROM job_events
GROUP BY minute, event, outcome, error_code;

CREATE MATERIALIZED VIEW IF NOT EXISTS job_page_totals_mv TO job_page_totals AS
SELECT
    job_id, ok,
    uniqExactState(event_id) AS pages,
    sumState(bytes) AS bytes_sum,
    quantilesTimingState(0.5, 0.95, 0.99)(fetch_ms) AS fetch_ms_quantiles,
    sumState(toUInt64(greatest(attempts, 1) - 1)) AS retries,
    minState(ts) AS first_ts,
    maxState(ts) AS last_ts
FROM page_fetches
GROUP BY job_id, ok;

CREATE MATERIALIZED VIEW IF NOT EXISTS job_item_totals_mv TO job_item_totals AS
SELECT job_id, uniqExactState(event_id) AS items
FROM items
GROUP BY job_id;
