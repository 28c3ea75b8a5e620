-- Items extracted per time bucket (ItemExtracted events, one per event id).
-- @name items
-- @shape series
-- @title Items
-- @unit items
-- @series items_extracted
SELECT
    intDiv(toUInt32(ts), {step}) * {step} AS t,
    uniqExact(event_id) AS items_extracted
FROM items
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY t
ORDER BY t
