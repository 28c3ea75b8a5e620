-- Errors by host, with the host's error rate and its most frequent kind (ties: the first by name,
-- so every ClickHouse answers alike; topK's order among equal counts is the engine's own).
-- @name errors_by_host
-- @shape table
-- @title Errors by host
SELECT
    host AS host_name,
    uniqExactIf(event_id, ok = 0 OR status >= 400) AS errors,
    uniqExactIf(event_id, ok = 0) AS dead_lettered,
    uniqExact(event_id) AS fetches,
    errors / fetches AS error_rate,
    arrayElement(arraySort(k -> (-countEqual(kinds, k), k), arrayDistinct(groupArrayIf(if(ok = 0, if(error_code = '', 'UNKNOWN', error_code), concat('HTTP ', toString(status))), ok = 0 OR status >= 400) AS kinds)), 1) AS top_kind
FROM page_fetches
PREWHERE ts >= toDateTime({from}) AND ts < toDateTime({to})
WHERE job_id IN (SELECT job_id FROM job_events WHERE user_id IN ({user}))
  AND ({host} = '' OR host = {host})
  AND ({job_id} = '' OR job_id = {job_id})
GROUP BY host_name
HAVING errors > 0
ORDER BY errors DESC, host_name
LIMIT {limit}
