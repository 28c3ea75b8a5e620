/**
 * Request options over real sockets: a local site that answers only when it sees the crawl's
 * header, cookie, user agent and Accept-Language — for the page, its robots.txt and its sitemap —
 * and robots.txt matched against the operator's product token whatever user agent a crawl sends.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { samples } from '@trawl/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { SitemapReader } from '../sitemap/sitemap-reader.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { PageProcessor } from '../worker/page-processor.ts';
import { requestProfileOf } from './request-profile.ts';
import { openSpecCredentials, type CredentialOpener } from './credentials.ts';
import { InvalidSpecError } from '../errors.ts';

const OPTIONS = { headers: { 'X-Api-Key': 'k-123', Authorization: 'Bearer tok' }, user_agent: 'GateBot/1.0', locale: 'fr-CH', cookies: { '127.0.0.1': ['consent=yes', 'sid=s3cret; Path=/'] } };

let site: LocalServer;
let other: LocalServer;
const seen: { path: string; headers: IncomingHttpHeaders }[] = [];
const otherSeen: IncomingHttpHeaders[] = [];
let fetcher: HttpFetcher;

/** The gate: every wanted thing, or 403 (a 503 for robots.txt, which would hold the crawl). */
function admitted(h: IncomingHttpHeaders): boolean {
  return h['x-api-key'] === 'k-123' && h['user-agent'] === 'GateBot/1.0' && h['accept-language'] === 'fr-CH,fr;q=0.9' && /(^|; )consent=yes(;|$)/.test(h.cookie ?? '') && /sid=s3cret/.test(h.cookie ?? '');
}

beforeAll(async () => {
  other = await startLocalServer({ '/landing': (q, r) => (otherSeen.push(q.headers), r.writeHead(200, { 'content-type': 'text/html' }).end('<p>other</p>')) });
  const gated = (status: number, type: string, body: () => string) => (q: import('node:http').IncomingMessage, r: import('node:http').ServerResponse) => {
    seen.push({ path: q.url!, headers: q.headers });
    if (!admitted(q.headers)) return void r.writeHead(status, { 'content-type': 'text/plain' }).end('go away');
    r.writeHead(200, { 'content-type': type }).end(body());
  };
  site = await startLocalServer({
    '/robots.txt': gated(503, 'text/plain', () => `User-agent: *\nAllow: /\nSitemap: ${site.origin}/sitemap.xml\n`),
    '/': gated(403, 'text/html', () => '<a href="/a">a</a>'),
    '/sitemap.xml': gated(403, 'application/xml', () => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${site.origin}/listed</loc></url></urlset>`),
    '/away': (q, r) => (seen.push({ path: q.url!, headers: q.headers }), r.writeHead(302, { location: `${other.origin}/landing` }).end()),
    '/trawl-robots/robots.txt': (_q, r) => r.end(''),
  });
  fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), totalTimeoutMs: 10_000 });
});

afterAll(async () => {
  await fetcher?.close();
  await site?.close();
  await other?.close();
});

describe('the HTTP fetcher with request options', () => {
  it('sends the headers, user agent, Accept-Language and cookies, and the site answers', async () => {
    const request = requestProfileOf(testSpec(OPTIONS))!;
    const r = await fetcher.fetch(`${site.origin}/`, { request });
    expect(r.status).toBe(200);
    const h = seen.at(-1)!.headers;
    expect(h).toMatchObject({ 'x-api-key': 'k-123', authorization: 'Bearer tok', 'user-agent': 'GateBot/1.0', 'accept-language': 'fr-CH,fr;q=0.9' });
    expect(h.cookie).toBe('consent=yes; sid=s3cret');
    expect((await fetcher.fetch(`${site.origin}/`)).status).toBe(403);
  });

  it('sends the default, honest user agent without options', async () => {
    await fetcher.fetch(`${site.origin}/`);
    expect(seen.at(-1)!.headers['user-agent']).toMatch(/^Trawl\/[\d.]+ \(\+https?:\/\/\S+\)$/);
  });

  it("does not take the user's headers along on a redirect to another origin (User-Agent and Accept-Language go)", async () => {
    const request = requestProfileOf(testSpec(OPTIONS))!;
    // Both servers are 127.0.0.1: cookies ignore ports (RFC 6265 §8.5), so a host-only cookie is sent to both; Authorization is per origin.
    const r = await fetcher.fetch(`${site.origin}/away`, { request });
    expect(r.finalUrl).toBe(`${other.origin}/landing`);
    expect(seen.at(-1)!.headers.authorization).toBe('Bearer tok');
    expect(otherSeen.at(-1)!.authorization).toBeUndefined();
    expect(otherSeen.at(-1)!['x-api-key']).toBeUndefined();
    expect(otherSeen.at(-1)!['user-agent']).toBe('GateBot/1.0');
  });
});

describe('a page with request options through the page processor', () => {
  it('reads robots.txt, the page and its sitemap with them', async () => {
    const robots = new RobotsCache(fetcher);
    const limiter = new HostLimiter();
    const processor = new PageProcessor({ http: fetcher, robots, limiter, sitemaps: new SitemapReader({ http: fetcher, robots, limiter }) });
    const spec = testSpec({ ...OPTIONS, max_depth: 1 });
    const job = '11111111-2222-4333-8444-555555555555';
    const from = seen.length;
    const page = await processor.process({ ...samples.FetchRequested, job_id: job, url: `${site.origin}/`, depth: 0, referrer: null, spec, params: {}, cached: null });
    expect(page.result.status).toBe(200);
    expect(page.sitemaps?.urls).toEqual([`${site.origin}/listed`]);
    const asked = seen.slice(from);
    expect(asked.map((s) => s.path).sort()).toEqual(['/', '/robots.txt', '/sitemap.xml']);
    for (const s of asked) expect(admitted(s.headers), s.path).toBe(true);
  });
});

describe("robots.txt and the operator's product token", () => {
  const ROBOTS = 'User-agent: Trawl\nDisallow: /not-for-trawl\n\nUser-agent: *\nDisallow: /not-for-others\n';
  const scripted = (text: string) => ({
    async fetch() {
      return { url: 'x', finalUrl: 'x', status: 200, contentType: 'text/plain', bytes: text.length, wireBytes: text.length, fetchMs: 1, body: text, isHtml: false, truncated: false, redirects: [], retryAfterMs: null, charset: null, renderMode: 'http' as const };
    },
  });

  it('applies the Trawl group to Trawl, and the * group to another token', async () => {
    const trawl = new RobotsCache(scripted(ROBOTS), { productToken: 'Trawl' });
    expect((await trawl.check('https://a.test/not-for-trawl')).allowed).toBe(false);
    expect((await trawl.check('https://a.test/not-for-others')).allowed).toBe(true);
    const other = new RobotsCache(scripted(ROBOTS), { productToken: 'AcmeBot' });
    expect((await other.check('https://a.test/not-for-trawl')).allowed).toBe(true);
    expect((await other.check('https://a.test/not-for-others')).allowed).toBe(false);
  });

  it("keeps the operator's token when a crawl sends another user agent", async () => {
    const robots = new RobotsCache(scripted(ROBOTS), { productToken: 'Trawl' });
    const request = requestProfileOf(testSpec({ user_agent: 'Mozilla/5.0 (pretending)' }));
    expect((await robots.check('https://a.test/not-for-trawl', { request })).allowed).toBe(false);
    expect((await robots.check('https://a.test/not-for-others', { request })).allowed).toBe(true);
  });

  it("keeps a robots.txt read with one crawl's options apart from another's", async () => {
    const robots = new RobotsCache(fetcher);
    await expect(robots.check(`${site.origin}/`)).rejects.toThrow(/answered 503/);
    expect((await robots.check(`${site.origin}/`, { request: requestProfileOf(testSpec(OPTIONS)) })).allowed).toBe(true);
  });
});

describe('sealed request options through the page processor', () => {
  // The worker's opener is a SecretBox (apps/services/worker credential-opener.ts); this package knows no key, so a reversible stand-in seals here.
  const seal = (v: string) => `sealed:${Buffer.from(v).toString('base64url')}`;
  const opener: CredentialOpener = {
    open: (v) => {
      if (!v.startsWith('sealed:')) throw new Error('does not open');
      return Buffer.from(v.slice(7), 'base64url').toString();
    },
    fingerprint: (text) => `keyed:${text.length}`,
  };
  const sealed = {
    ...OPTIONS,
    headers: Object.fromEntries(Object.entries(OPTIONS.headers).map(([k, v]) => [k, seal(v)])),
    cookies: Object.fromEntries(Object.entries(OPTIONS.cookies).map(([d, l]) => [d, l.map(seal)])),
  };

  it('opens headers and cookies once per spec and sends them clear to robots.txt, the page and its sitemap', async () => {
    const robots = new RobotsCache(fetcher);
    const limiter = new HostLimiter();
    const processor = new PageProcessor({ http: fetcher, robots, limiter, sitemaps: new SitemapReader({ http: fetcher, robots, limiter }), credentials: opener });
    const spec = testSpec({ ...sealed, max_depth: 1 });
    const from = seen.length;
    const page = await processor.process({ ...samples.FetchRequested, job_id: '11111111-2222-4333-8444-666666666666', url: `${site.origin}/`, depth: 0, referrer: null, spec, params: {}, cached: null });
    expect(page.result.status).toBe(200);
    const asked = seen.slice(from);
    expect(asked.map((s) => s.path).sort()).toEqual(['/', '/robots.txt', '/sitemap.xml']);
    for (const s of asked) expect(admitted(s.headers), s.path).toBe(true);
    expect(openSpecCredentials(spec, opener)).toBe(openSpecCredentials(spec, opener));
    expect(openSpecCredentials(spec, opener).headers['X-Api-Key']).toBe('k-123');
    // The spec itself stays sealed.
    expect(JSON.stringify(spec)).not.toContain('s3cret');
  });

  it('fails the page, not retriable, when a value does not open, naming where it sits and not what it holds', async () => {
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter(), credentials: opener });
    const spec = testSpec({ headers: { 'x-api-key': 'tsec1.deadbeef.AAAA.BBBB.CCCC' } });
    const err = await processor.process({ ...samples.FetchRequested, url: `${site.origin}/`, depth: 1, referrer: null, spec, params: {}, cached: null }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidSpecError);
    expect((err as Error).message).toMatch(/header x-api-key is sealed and does not open/);
    expect((err as Error).message).not.toContain('deadbeef');
  });
});
