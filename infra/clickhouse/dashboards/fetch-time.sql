-- Fetch time of fetched pages, p50 / p95 / p99 per time bucket, in ms.
-- quantilesTiming is exact below 5670 values per bucket and within 1 ms up to 30 s beyond: the
-- right trade for request durations (failed fetches have no time and are left out).
-- @name fetch_time
-- @shape series
-- @title Fetch time
-- @unit ms
-- @series p50, p95, p99
SELECT t, q[1] AS p50, q[2] AS p95, q[3] AS p99
FROM
(
    SELECT
        intDiv(toUInt32(ts), {step}) * {step} AS t,
        quantilesTiming(0.5, 0.95, 0.99)(fetch_ms) AS q
    FROM page_fetches
    PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
    WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
      AND ({host} = '' OR host = {host})
      AND ({job_id} = '' OR job_id = {job_id})
      AND ok = 1
    GROUP BY t
)
ORDER BY t
