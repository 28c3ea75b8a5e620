import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { ProxyPools } from '@trawl/crawl';
import { proxyObserver } from './proxy-metrics.ts';

const logger = { warn: () => undefined } as never;

describe('proxy metrics', () => {
  it('counts outcomes, latency and benchings per proxy by host:port, never credentials, with bounded labels', async () => {
    const registry = new Registry();
    const pools = new ProxyPools({ benchAfter: 1, open: (v) => v, observer: proxyObserver(registry, logger, 2) });
    const spec = (url: string) => ({ proxies: [{ url, username: 'user', password: 'hunter2' }], proxy_rotation: 'round_robin' as const });
    const a = pools.pick('j', spec('http://203.0.114.1:3128'))!;
    pools.report(a, 'ok', 120);
    pools.report(a, 'banned', 80);
    pools.report(a, 'error', 5);
    pools.report(pools.pick('j2', spec('socks5://203.0.114.2:1080'))!, 'ok', 10);
    pools.report(pools.pick('j3', spec('http://203.0.114.3:3128'))!, 'ok', 10);
    const text = await registry.metrics();
    expect(text).toContain('trawl_worker_proxy_requests_total{proxy="203.0.114.1:3128",outcome="ok"} 1');
    expect(text).toContain('trawl_worker_proxy_requests_total{proxy="203.0.114.1:3128",outcome="banned"} 1');
    expect(text).toContain('trawl_worker_proxy_requests_total{proxy="203.0.114.1:3128",outcome="error"} 1');
    expect(text).toContain('trawl_worker_proxy_benched_total{proxy="203.0.114.1:3128"} 1');
    expect(text).toContain('trawl_worker_proxy_latency_seconds_count{proxy="203.0.114.1:3128"} 3');
    expect(text).toContain('trawl_worker_proxy_requests_total{proxy="other",outcome="ok"} 1');
    expect(text).not.toMatch(/hunter2|user@/);
  });
});
