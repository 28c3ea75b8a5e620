/**
 * What the jobs' proxy pools see (CrawlSpec.proxies, TRAWL_PROXY_URL: the crawl's proxy-pool.ts),
 * as metrics and log lines: per proxy, requests by outcome (ok: an answer came back through it;
 * error: no connection through it; banned: the site answered a block through it), their latency,
 * and the times it was benched. Proxies are labelled by `host:port` only — never their credentials,
 * and no job id (a series per job). Tenants name their proxies, so the labels are bounded: the
 * first `maxProxies` proxies seen get their own series, the rest share `proxy="other"`. A benched
 * proxy is said in the worker's log with its job (the job's own log says it through PageFetched.notes).
 */
import { counterIn, DURATION_BUCKETS, histogramIn, type Logger } from '@trawl/streams';
import type { ProxyObserver } from '@trawl/crawl';
import type { Registry } from 'prom-client';

export function proxyObserver(registry: Registry, logger: Logger, maxProxies = 200): ProxyObserver {
  const requests = counterIn(registry, 'trawl_worker_proxy_requests_total', 'Requests sent through an upstream proxy, by proxy (host:port; "other" past the first 200) and outcome (ok, error: no connection through it, banned: a block page came back through it).', ['proxy', 'outcome']);
  const latency = histogramIn(registry, 'trawl_worker_proxy_latency_seconds', 'Time of a request through an upstream proxy, from sending to the end of the answer or the failure, by proxy (host:port; "other" past the first 200).', ['proxy'], DURATION_BUCKETS);
  const benched = counterIn(registry, 'trawl_worker_proxy_benched_total', 'Times a proxy was benched for a job after TRAWL_PROXY_BENCH_AFTER connect errors in a row, by proxy (host:port; "other" past the first 200).', ['proxy']);
  const labelled = new Set<string>();
  const labelOf = (label: string): string => {
    if (labelled.has(label)) return label;
    if (labelled.size >= maxProxies) return 'other';
    labelled.add(label);
    return label;
  };
  return {
    outcome(proxy, outcome, latencyMs) {
      const label = labelOf(proxy.label);
      requests.inc({ proxy: label, outcome });
      latency.observe({ proxy: label }, latencyMs / 1000);
    },
    benched(jobId, proxy, failures, until) {
      benched.inc({ proxy: labelOf(proxy.label) });
      logger.warn({ job_id: jobId, proxy: proxy.label, failures, benched_until: new Date(until).toISOString() }, `proxy ${proxy.label} benched after ${failures} connect errors in a row`);
    },
  };
}
