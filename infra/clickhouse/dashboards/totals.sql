-- The headline figures of the range: one row.
-- @name totals
-- @shape table
-- @title Totals
SELECT
    uniqExactIf(event_id, ok = 1) AS pages,
    uniqExactIf(event_id, ok = 0) AS failed,
    sum(bytes) AS bytes_sum,
    sum(greatest(attempts, 1) - 1) AS retries,
    uniqExact(host) AS hosts,
    uniqExact(job_id) AS jobs,
    quantileTimingIf(0.95)(fetch_ms, ok = 1) AS p95_ms,
    (
        SELECT uniqExact(event_id)
        FROM items
        PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
        WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
          AND ({host} = '' OR host = {host})
          AND ({job_id} = '' OR job_id = {job_id})
    ) AS items_extracted
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
