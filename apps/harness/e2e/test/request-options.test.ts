/**
 * Request options end to end, through the public API (issue 33, request options): a site that
 * answers only when it sees a given header, cookie and user agent is crawled whole with them, and
 * not at all without them; its robots.txt rules for Trawl still hold for a crawl that sends another
 * user agent; and the cookie's value shows in no service's log.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';

const COOKIE_VALUE = 'e2e-session-6b1f0c';
const PAGES = 5;

let site: Server;
let origin: string;
let pipeline: Pipeline;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];

function admitted(h: IncomingHttpHeaders): boolean {
  return h['x-api-key'] === 'e2e-key' && h['user-agent'] === 'GateBot/1.0 (+https://ops.example)' && (h.cookie ?? '').split('; ').includes(`sid=${COOKIE_VALUE}`);
}

let api: Api;
let until: Until;

async function crawl(body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const submitted = await api('POST', '/crawl', body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  const jobId = submitted.body.job_id as string;
  const status = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 120_000, `job ${jobId} over`);
  return status.body;
}

beforeAll(async () => {
  site = createServer((req, res) => {
    const path = req.url ?? '/';
    seen.push({ path, headers: req.headers });
    // Trawl may not fetch /p/4 — whatever user agent a crawl sends, robots.txt is read for Trawl.
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: Trawl\nDisallow: /p/4\n\nUser-agent: *\nAllow: /\n');
    if (!admitted(req.headers)) return void res.writeHead(403, { 'content-type': 'text/html' }).end('<p>forbidden</p>');
    const links = Array.from({ length: PAGES }, (_, i) => `<a href="/p/${i}">${i}</a>`).join('');
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><html><body><h1>${path}</h1>${links}</body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const port = (site.address() as AddressInfo).port;
  origin = `http://127.0.0.1:${port}`;
  ({ pipeline, api, until } = await startApiPipeline({ env: { TRAWL_FETCH_ALLOW: `127.0.0.1:${port}` }, users: ['reacher'] }));
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await new Promise((resolve) => site?.close(resolve));
});

describe('a site that answers only with the right header, cookie and user agent', () => {
  it('is crawled whole with them, robots.txt read for Trawl', async () => {
    const from = seen.length;
    const status = await crawl({
      start_urls: [`${origin}/`], depth: 1, sitemap: 'skip', ignore_cache: true,
      headers: { 'X-Api-Key': 'e2e-key' }, user_agent: 'GateBot/1.0 (+https://ops.example)', locale: 'fr-CH',
      cookies: { '127.0.0.1': [`sid=${COOKIE_VALUE}; Path=/`] },
    });
    // The root and /p/0../p/3 (the root's /p/0 is a page of its own); /p/4 is disallowed for Trawl.
    expect(status).toMatchObject({ status: 'finished', counters: { pages_fetched: PAGES } });
    const pages = seen.slice(from).filter((s) => s.path !== '/robots.txt');
    expect(pages.map((s) => s.path)).not.toContain('/p/4');
    for (const s of pages) {
      expect(admitted(s.headers), s.path).toBe(true);
      expect(s.headers['accept-language']).toBe('fr-CH,fr;q=0.9');
    }
  }, 180_000);

  it('gives nothing without them', async () => {
    const status = await crawl({ start_urls: [`${origin}/`], depth: 1, sitemap: 'skip', ignore_cache: true });
    expect(status).toMatchObject({ counters: { pages_fetched: 0, pages_failed: 1 } });
    expect(seen.at(-1)!.headers['user-agent']).toMatch(/^Trawl\//);
  }, 180_000);

  it("leaves the cookie's value in no service's log", async () => {
    for (const child of pipeline.children) expect(readFileSync(child.logFile, 'utf8'), child.app).not.toContain(COOKIE_VALUE);
  });
});
