/**
 * Blocks and adaptive throttling in the PageProcessor, against the hard site's rate limit (a real
 * HTTP server answering 200 with a captcha past its limit) and the real fetcher: a captcha page or a
 * declared block fails as BlockedError and is never parsed; an adaptive job's 503 lowers its own
 * concurrency instead of pausing the host.
 */
import { createHardSite, expectedMembers, expectedRateLimit, rateLimitRecord, type HardSite } from '@trawl/demo-site';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedError, LoginRequiredError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { BlockClassifier } from '../blocks/block-classifier.ts';
import { AutoThrottle } from '../politeness/auto-throttle.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { fetchId } from '../url/normalise.ts';
import { PageProcessor } from './page-processor.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';
import type { CrawlSpec } from '@trawl/schemas';

const JOB = '5b7e2c1d-0a4f-5c3e-9d8b-1f2e3a4b5c6d';
const policy = new AddressPolicy(parseAllowList('127.0.0.1/32'));

let site: HardSite;
let busy: LocalServer;
let fetcher: HttpFetcher;

beforeAll(async () => {
  site = await createHardSite();
  let inFlight = 0;
  busy = await startLocalServer({
    '/robots.txt': (_req, res) => void res.writeHead(404).end(),
    '/busy': (_req, res) => {
      if (inFlight >= 2) return void res.writeHead(503, { 'content-type': 'text/html' }).end('<p>busy</p>');
      inFlight++;
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'text/html' }).end('<p>ok</p>');
      }, 30);
    },
  });
  fetcher = new HttpFetcher({ policy, totalTimeoutMs: 10_000 });
});
afterAll(async () => {
  await fetcher.close();
  await site.close();
  await busy.close();
});

const request = (url: string, spec: CrawlSpec, jobId = JOB): FetchWithSpec => ({
  event_id: '0b6d9c1e-5a3f-5e7b-9c2d-000000000007',
  occurred_at: new Date(),
  causation_id: null,
  job_id: jobId,
  fetch_id: fetchId(jobId, url),
  url,
  depth: 1,
  referrer: null,
  spec,
  spec_hash: null,
  params: {},
  cached: null,
  user_id: null,
});

describe('PageProcessor: blocks', () => {
  it('fails a captcha page with BlockedError (retriable, session retired) and never parses it', async () => {
    let parses = 0;
    const processor = new PageProcessor({
      http: fetcher,
      robots: new RobotsCache(fetcher),
      limiter: new HostLimiter({}),
      blocks: new BlockClassifier(),
      parse: async () => (parses++, { links: [], nextPage: null, items: [], cut: null }),
    });
    const spec = testSpec({ item_root: expectedRateLimit.itemSelector, item_fields: [{ name: 'title', selector: expectedRateLimit.titleSelector, attribute: null, xpath: null, transforms: [] }] });
    const outcomes: (string | null)[] = [];
    for (let i = 1; i <= expectedRateLimit.limit + 2; i++) {
      try {
        await processor.process(request(`${site.origin}/rate-limit/p/${i}`, spec));
        outcomes.push(null);
      } catch (err) {
        expect(err).toBeInstanceOf(BlockedError);
        const blocked = err as BlockedError;
        expect(blocked).toMatchObject({ code: 'TRAWL_BLOCKED', retriable: true, status: 200, verdict: { rule: 'captcha', retireSession: true } });
        outcomes.push(blocked.verdict.rule);
      }
    }
    // Past the limit (the fetcher keeps no cookie: one client, one budget) every page is the captcha.
    expect(outcomes).toEqual([...Array(expectedRateLimit.limit).fill(null), 'captcha', 'captcha']);
    expect(rateLimitRecord(site.origin).captchas).toBe(2);
    expect(parses).toBe(expectedRateLimit.limit);
  });

  it('fails a page matching block_patterns, and passes it without them', async () => {
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}), blocks: new BlockClassifier() });
    const url = `${site.origin}${expectedRateLimit.noticePath}`;
    await expect(processor.process(request(url, testSpec({ block_patterns: [expectedRateLimit.blockPattern] })))).rejects.toMatchObject({ code: 'TRAWL_BLOCKED', verdict: { rule: 'pattern' } });
    await expect(processor.process(request(url, testSpec()))).resolves.toMatchObject({ parsed: true, result: { status: 200 } });
  });
});

describe('PageProcessor: login walls', () => {
  // The members' area with its consent given and its header check passed, but no login: its member page redirects to the form.
  const walled = (extra: Partial<CrawlSpec> = {}) => testSpec({ user_agent: `${expectedMembers.userAgentToken}/1.0`, cookies: { [new URL(site.origin).hostname]: ['consent=yes'] }, ...extra });

  it('fails a member page redirected to the login form TRAWL_LOGIN_REQUIRED, not retried, never parsed; the login page asked for is a page', async () => {
    let parses = 0;
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}), blocks: new BlockClassifier(), parse: async () => (parses++, { links: [], nextPage: null, items: [], cut: null }) });
    const err = await processor.process(request(`${site.origin}${expectedMembers.entry}`, walled())).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoginRequiredError);
    expect(err).toBeInstanceOf(BlockedError);
    expect(err).toMatchObject({ code: 'TRAWL_LOGIN_REQUIRED', retriable: false, status: 200, verdict: { rule: 'login_wall' } });
    expect((err as Error).message).toMatch(/^login required: .*\/members\/ redirected to a login form \(.*\/members\/login\?next=.*\); declare `login`$/);
    expect(parses).toBe(0);
    // The site's own login page, asked for, is the page.
    await expect(processor.process(request(`${site.origin}${expectedMembers.loginUrl}`, walled()))).resolves.toMatchObject({ parsed: true, result: { status: 200 } });
    expect(parses).toBe(1);
  });

  it('with a login declared, the wall is a retriable block: the session lost its login', async () => {
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter({}), blocks: new BlockClassifier() });
    const login = { kind: 'form', url: `${site.origin}${expectedMembers.loginUrl}`, form_selector: expectedMembers.formSelector, fields: {}, success_selector: null, failure_text: null, actions: [] } as unknown as CrawlSpec['login'];
    const err = await processor.process(request(`${site.origin}${expectedMembers.entry}`, walled({ login }))).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(LoginRequiredError);
    expect(err).toMatchObject({ code: 'TRAWL_BLOCKED', retriable: true, verdict: { rule: 'login_wall' } });
  });
});

describe('PageProcessor: adaptive throttling', () => {
  it('lowers the job’s concurrency on a 503 instead of pausing the host, within host_concurrency', async () => {
    const limiter = new HostLimiter({});
    const throttle = new AutoThrottle({ startConcurrency: 4 });
    const processor = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter, throttle });
    const spec = testSpec({ adaptive_throttle: true, host_concurrency: 4 });
    const host = new URL(busy.origin).host;
    const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => processor.process(request(`${busy.origin}/busy?${i}`, spec))));
    expect(results.filter((r) => r.status === 'rejected').length).toBeGreaterThan(0);
    const choice = throttle.choice(host, JOB)!;
    expect(choice.concurrency).toBeLessThan(4);
    expect(choice.errors).toBeGreaterThan(0);
    // The host is not paused for everyone: the job's own limit went down instead.
    expect(limiter.stats(host)!.blockedForMs).toBe(0);
    expect(limiter.jobStats(host, JOB)!.policy.maxConcurrency).toBe(choice.concurrency);
    // A job without adaptive_throttle gets the host-wide pause, as before.
    const fixed = new HostLimiter({});
    const plain = new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: fixed, throttle });
    await Promise.allSettled(Array.from({ length: 4 }, (_, i) => plain.process(request(`${busy.origin}/busy?p${i}`, testSpec({ host_concurrency: 4 }), 'other-job'))));
    expect(fixed.stats(host)!.blockedForMs).toBeGreaterThan(0);
  });
});
