/**
 * What the adaptive throttle chose (CrawlSpec.adaptive_throttle), read at scrape time: per host,
 * the delay between request starts and the requests in flight it allows. Labelled by host only
 * (job ids would make a series per job); when several jobs steer one host, the most recently
 * steered one is shown. The most recently steered `maxHosts` hosts are exported, so a crawl of
 * many hosts does not grow the scrape without bound.
 */
import { liveGaugeIn } from '@trawl/streams';
import type { AutoThrottle } from '@trawl/crawl';
import type { Registry } from 'prom-client';

export function registerThrottleGauges(registry: Registry, throttle: Pick<AutoThrottle, 'choices'>, maxHosts = 100): void {
  const latest = () => {
    const byHost = new Map<string, { delayMs: number; concurrency: number }>();
    // choices() runs least recently used first: a later entry of the same host is the newer.
    for (const c of throttle.choices()) {
      byHost.delete(c.host);
      byHost.set(c.host, c);
    }
    return [...byHost].slice(-maxHosts);
  };
  liveGaugeIn(registry, 'trawl_worker_throttle_delay_ms', 'Delay between request starts the adaptive throttle chose, per host (jobs with adaptive_throttle).', ['host']).add(() =>
    latest().map(([host, c]) => [{ host }, c.delayMs]),
  );
  liveGaugeIn(registry, 'trawl_worker_throttle_concurrency', 'Requests in flight the adaptive throttle allows, per host (jobs with adaptive_throttle).', ['host']).add(() =>
    latest().map(([host, c]) => [{ host }, c.concurrency]),
  );
}
