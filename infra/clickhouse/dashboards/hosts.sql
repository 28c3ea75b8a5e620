-- The hosts of the range, busiest first: the choices of the host filter (job filter applied,
-- host filter not, so the list does not shrink to the chosen host).
-- @name hosts
-- @shape table
-- @title Hosts
SELECT
    host AS host_name,
    uniqExact(event_id) AS fetches
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY host_name
ORDER BY fetches DESC, host_name
LIMIT 200
