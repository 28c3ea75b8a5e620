-- Trawl analytics, projection version 2: rollups, filled by materialised views at insert time.
--
-- AggregatingMergeTree with -State columns, read with the matching -Merge functions and GROUP BY
-- (parts merge in the background, so a key may still have several rows). Counts are
-- uniqExact(event_id) states, so even an event stored twice under two positions counts once.
-- Sums and quantiles are exact because the projector never inserts a position twice, nor a page
-- event it already stored at another position (within its dedupe window).
--
-- 18.16 requires a view to produce every column of its target, hence one target table per
-- source table. An aggregate column never shares a fact column's name: 18.16 would resolve the
-- column to the view's alias. Views are dropped and created again by a replay's swap (a view follows its
-- source table's name, not the table).

CREATE TABLE IF NOT EXISTS pages_by_minute (
    minute       DateTime,
    host         String,
    status       UInt16,
    ok           UInt8,
    error_code   String,
    render_mode  Enum8('http' = 1, 'browser' = 2),
    pages        AggregateFunction(uniqExact, String),
    bytes_sum    AggregateFunction(sum, UInt64),
    fetch_ms_quantiles AggregateFunction(quantilesTiming(0.5, 0.95, 0.99), UInt32),
    fetch_ms_sum AggregateFunction(sum, UInt64),
    retries      AggregateFunction(sum, UInt64)
) ENGINE = AggregatingMergeTree()
ORDER BY (minute, host, status, ok, error_code, render_mode);

CREATE TABLE IF NOT EXISTS items_by_minute (
    minute DateTime,
    host   String,
    items  AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree()
ORDER BY (minute, host);

CREATE TABLE IF NOT EXISTS job_events_by_minute (
    minute     DateTime,
    event      String,
    outcome    String,
    error_code String,
    events     AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree()
ORDER BY (minute, event, outcome, error_code);

CREATE TABLE IF NOT EXISTS job_page_totals (
    job_id       String,
    ok           UInt8,
    pages        AggregateFunction(uniqExact, String),
    bytes_sum    AggregateFunction(sum, UInt64),
    fetch_ms_quantiles AggregateFunction(quantilesTiming(0.5, 0.95, 0.99), UInt32),
    retries      AggregateFunction(sum, UInt64),
    first_ts     AggregateFunction(min, DateTime),
    last_ts      AggregateFunction(max, DateTime)
) ENGINE = AggregatingMergeTree()
ORDER BY (job_id, ok);

CREATE TABLE IF NOT EXISTS job_item_totals (
    job_id String,
    items  AggregateFunction(uniqExact, String)
) ENGINE = AggregatingMergeTree()
ORDER BY job_id;
