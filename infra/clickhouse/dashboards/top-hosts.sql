-- Top hosts by pages fetched: pages, dead-lettered fetches, bytes, p95 fetch time, retries.
-- @name top_hosts
-- @shape table
-- @title Top hosts
SELECT
    host AS host_name,
    uniqExactIf(event_id, ok = 1) AS pages,
    uniqExactIf(event_id, ok = 0) AS failed,
    sum(bytes) AS bytes_sum,
    quantileTimingIf(0.95)(fetch_ms, ok = 1) AS p95_ms,
    sum(greatest(attempts, 1) - 1) AS retries
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY host_name
ORDER BY pages DESC, host_name
LIMIT {limit}
