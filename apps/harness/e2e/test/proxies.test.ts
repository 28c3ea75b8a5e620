/**
 * Proxies end to end, through the public API (issue 33, proxies): the hard site's pages that answer
 * only through a proxy are crawled whole through a pool of real proxies — tinyproxy with a password
 * from the user's secrets, microsocks, and a dead one that gets benched, said in the job's log — and
 * not at all without one; a proxy on a stack port is refused 400; the proxy's password shows in no
 * service's log.
 */
import { readFileSync } from 'node:fs';
import { createHardSite, expectedProxyOnly, startHttpProxy, startSocksProxy, type HardSite, type RunningProxy } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { freePort, startApiPipeline, type Until } from '../src/api-pipeline.ts';

const PASSWORD = 'e2e-proxy-pass-5d7a91';
let site: HardSite;
let tiny: RunningProxy;
let socks: RunningProxy;
let deadPort: number;
let pipeline: Pipeline;

let api: Api;
let until: Until;

async function crawl(body: Record<string, unknown>): Promise<{ jobId: string; status: Record<string, unknown> }> {
  const submitted = await api('POST', '/crawl', body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 120_000, `job ${jobId} over`);
  return { jobId, status: status.body };
}

beforeAll(async () => {
  [site, tiny, socks] = await Promise.all([createHardSite(), startHttpProxy({ credentials: { username: 'crawler', password: PASSWORD } }), startSocksProxy()]);
  deadPort = await freePort();
  const ports = [new URL(site.origin).port, tiny.port, socks.port, deadPort];
  ({ pipeline, api, until } = await startApiPipeline({
    env: {
      TRAWL_FETCH_ALLOW: ports.map((p) => `127.0.0.1:${p}`).join(','),
      TRAWL_FETCH_RETRY_DELAYS_MS: '200,400,600',
      TRAWL_PROXY_BENCH_AFTER: '1',
      TRAWL_PROXY_BENCH_MS: '600000',
    },
    users: ['proxied'],
  }));
  expect((await api('POST', '/secrets', { name: 'proxy-pass', value: PASSWORD })).status).toBe(201);
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await Promise.all([site, tiny, socks].map((s) => s?.close()));
});

describe('a site that answers only through a proxy', () => {
  it('is crawled whole through a pool of real proxies; the dead one is benched and the job log says so', async () => {
    const tinyFrom = tiny.log().length;
    const socksFrom = socks.log().length;
    const { jobId, status } = await crawl({
      start_urls: [`${site.origin}${expectedProxyOnly.entry}`], depth: 1, sitemap: 'skip', ignore_cache: true,
      proxies: [
        { url: `http://127.0.0.1:${deadPort}` },
        { url: tiny.url, username: 'crawler', password: { secret: 'proxy-pass' } },
        { url: socks.url },
      ],
      proxy_rotation: 'round_robin',
    });
    const { rows: said } = await pipeline.db.pool.query<{ msg: string }>('SELECT msg FROM job_log WHERE job_id = $1 ORDER BY seq', [jobId]);
    if ((status.counters as { pages_failed: number }).pages_failed > 0) console.log(said.map((r) => r.msg).join('\n'), pipeline.children.filter((c) => c.app === 'worker').map((c) => readFileSync(c.logFile, 'utf8').split('\n').filter((l) => /proxy|warn|error/i.test(l)).slice(-15).join('\n')).join('\n'));
    expect(status).toMatchObject({ status: 'finished', counters: { pages_fetched: expectedProxyOnly.pages.length, pages_failed: 0 } });
    // Each page went through a live proxy: its request line in tinyproxy's log or its tunnel in microsocks'.
    const through = tiny.log().slice(tinyFrom) + socks.log().slice(socksFrom);
    expect(tiny.log().slice(tinyFrom)).toContain(`GET ${site.origin}/proxy/`);
    expect(socks.log().slice(socksFrom)).toContain(`connected to 127.0.0.1:${new URL(site.origin).port}`);
    expect(through.length).toBeGreaterThan(0);
    const { rows } = await pipeline.db.pool.query<{ msg: string }>('SELECT msg FROM job_log WHERE job_id = $1 ORDER BY seq', [jobId]);
    expect(rows.map((r) => r.msg).join('\n')).toContain(`proxy 127.0.0.1:${deadPort} benched for 600 s after 1 connect errors in a row`);
  }, 180_000);

  it('gives nothing without a proxy', async () => {
    const { status } = await crawl({ start_urls: [`${site.origin}${expectedProxyOnly.entry}`], depth: 1, sitemap: 'skip', ignore_cache: true });
    expect(status).toMatchObject({ counters: { pages_fetched: 0, pages_failed: 1 } });
  }, 180_000);

  it('refuses a proxy on a stack port, storing nothing', async () => {
    const res = await api('POST', '/crawl', { start_urls: [`${site.origin}/proxy/`], depth: 0, proxy: 'http://127.0.0.1:5432' });
    expect(res.status).toBe(400);
    expect((res.body.error as { code: string }).code).toBe('PROXY_NOT_ALLOWED');
  });

  it("leaves the proxy's password in no service's log", async () => {
    for (const child of pipeline.children) expect(readFileSync(child.logFile, 'utf8'), child.app).not.toContain(PASSWORD);
  });
});
