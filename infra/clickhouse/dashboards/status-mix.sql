-- Status-code mix over time: finished fetches per status class (2xx, 3xx, 4xx, 5xx, and
-- "none" for fetches that got no HTTP answer: timeouts, refusals, robots.txt).
-- @name status_mix
-- @shape series-by
-- @title Status-code mix
-- @unit pages
SELECT
    intDiv(toUInt32(ts), {step}) * {step} AS t,
    if(status = 0, 'none', concat(toString(intDiv(status, 100)), 'xx')) AS series,
    uniqExact(event_id) AS value
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY t, series
ORDER BY t, series
