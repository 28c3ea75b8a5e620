-- Every status code of the range with its count (0: no HTTP answer).
-- @name status_codes
-- @shape table
-- @title Status codes
SELECT
    status AS code,
    uniqExact(event_id) AS pages
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY code
ORDER BY pages DESC, code
LIMIT {limit}
