-- Trawl analytics, projection version 2: facts, one table per projected topic.
--
-- Runs on ClickHouse 18.16 and on current releases: no DateTime64, no query parameters, no TTL,
-- no LowCardinality. Table names are unqualified; the projector runs these files with the
-- database chosen per request (the live one, or a replay's shadow database).
--
-- Each row carries its Kafka position (_partition, _offset). The sorting key IS the position, so
--   * a message delivered again (same position) collapses (ReplacingMergeTree; read with FINAL),
--   * the projector can ask cheaply, through the primary index, which positions of a batch are
--     already stored, and insert only the others: the materialised rollups below never see a
--     redelivered message, which is what keeps them exact (see README, "Exactly once").
-- The same event re-emitted at another position (a worker that crashed after sending) is left
-- out of page_fetches by an event-id check within a window of offsets (the table with sums);
-- elsewhere it is absorbed at query time: counts use uniqExact(event_id), fact queries GROUP BY
-- event_id.

CREATE TABLE IF NOT EXISTS page_fetches (
    event_id    String,
    job_id      String,
    fetch_id    String,
    -- Best effort: known when the job's CrawlRequested/JobDispatched was read first.
    user_id     String,
    host        String,
    url         String,
    -- 0 when the fetch failed without an HTTP answer.
    status      UInt16,
    bytes       UInt64,
    fetch_ms    UInt32,
    render_mode Enum8('http' = 1, 'browser' = 2),
    depth       UInt16,
    ok          UInt8,
    error_code  String,
    attempts    UInt16,
    items       UInt32,
    ts          DateTime,
    _partition  UInt32,
    _offset     UInt64
) ENGINE = ReplacingMergeTree(_offset)
ORDER BY (_partition, _offset);

CREATE TABLE IF NOT EXISTS items (
    event_id    String,
    job_id      String,
    fetch_id    String,
    item_key    String,
    host        String,
    url         String,
    ts          DateTime,
    _partition  UInt32,
    _offset     UInt64
) ENGINE = ReplacingMergeTree(_offset)
ORDER BY (_partition, _offset);

CREATE TABLE IF NOT EXISTS job_events (
    event_id        String,
    job_id          String,
    -- CrawlRequested, JobDispatched, JobCompleted, JobFailed, JobCancelled, JobPaused, JobResumed
    -- (the last two since version 2: a job's paused time)
    event           String,
    user_id         String,
    outcome         String,
    error_code      String,
    pages_fetched   UInt32,
    pages_failed    UInt32,
    items_extracted UInt32,
    ts              DateTime,
    _partition      UInt32,
    _offset         UInt64
) ENGINE = ReplacingMergeTree(_offset)
ORDER BY (_partition, _offset);

-- Which projection version built this database's tables; swapped along with them by a replay.
CREATE TABLE IF NOT EXISTS projection_info (
    version  UInt32,
    built_by String,
    built_at DateTime
) ENGINE = TinyLog;
