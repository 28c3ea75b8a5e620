-- Pages fetched, fetches dead-lettered, bytes and retries per time bucket.
-- The console draws pages/min (pages × 60 / step), bytes, and "retries and DLQ over time" from it.
-- @name throughput
-- @shape series
-- @title Throughput
-- @unit pages
-- @series pages, failed, bytes_sum, retries
SELECT
    intDiv(toUInt32(ts), {step}) * {step} AS t,
    uniqExactIf(event_id, ok = 1) AS pages,
    uniqExactIf(event_id, ok = 0) AS failed,
    sum(bytes) AS bytes_sum,
    sum(greatest(attempts, 1) - 1) AS retries
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY t
ORDER BY t
