-- Errors by kind: a dead-lettered fetch counts under its error code (e.g. FETCH_TIMEOUT,
-- ROBOTS_DISALLOWED), a page answered with status >= 400 under "HTTP <status>".
-- @name errors_by_kind
-- @shape table
-- @title Errors by kind
SELECT
    if(ok = 0, if(error_code = '', 'UNKNOWN', error_code), concat('HTTP ', toString(status))) AS kind,
    uniqExact(event_id) AS errors,
    uniqExact(host) AS hosts,
    uniqExact(job_id) AS jobs,
    toUInt32(max(ts)) AS last_seen
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
  AND (ok = 0 OR status >= 400)
GROUP BY kind
ORDER BY errors DESC, kind
LIMIT {limit}
