/**
 * Reach, the issue's first proof, end to end through the public API (issue 33): the hard site's
 * members' area — a consent wall, a CSRF form login, member pages that need the session — with a
 * per-session rate limit that answers a captcha past a few member pages (`membersPageLimit`), is
 * crawled with a form login whose credentials are the user's secrets, a pool of 3 sessions and a
 * pool of real proxies (tinyproxy with a password from the secrets, microsocks) rotated
 * `per_session`:
 *
 * - every item; no member page fetched without a valid session (the site's own record), each
 *   through a proxy, each session's requests through one proxy;
 * - no captcha stored: the captchas the site served were blocks (the worker counts them), their
 *   sessions retired and replaced (`sessions_replaced`), the pages retried until they came, and
 *   no stored page holds the captcha;
 * - the same crawl without the options ends clearly: a wrong password fails the job LOGIN_FAILED;
 *   without the login (and without any `block_patterns`), the member page that redirects to the
 *   login form ends TRAWL_LOGIN_REQUIRED at once, counted blocked, the job's log saying to declare
 *   `login` — not an empty page; a rate-limited area crawled without sessions ends with its
 *   captchas TRAWL_BLOCKED, counted;
 * - a worker SIGKILLed mid-crawl: the job still gives every item, and both read models replayed
 *   from the log equal the live ones.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import {
  createHardSite, expectedMembers, expectedRateLimit, isMemberPage, membersRecord, startHttpProxy, startSocksProxy,
  type HardSite, type RunningProxy,
} from '@trawl/demo-site';
import type { PageFailed } from '@trawl/schemas';
import { readEvents } from '@trawl/streams';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Pipeline } from '../src/pipeline.ts';
import type { Api } from '../src/api-client.ts';
import { startApiPipeline, type Until } from '../src/api-pipeline.ts';
import { clickhouseOf, expectReadModelsEqualLog, expectReplaysEqualLive } from './chaos/support.ts';

const SESSIONS = 3;
/** Member pages a login session gets before the captcha: its login's landing page and two more. */
const PAGE_LIMIT = 3;
const PROXY_PASSWORD = `pp-${randomBytes(6).toString('hex')}`;
const spider = `members-${randomBytes(3).toString('hex')}`;

let site: HardSite;
let tiny: RunningProxy;
let socks: RunningProxy;
let pipeline: Pipeline;
let base: string;
let key: string;
let store: ContentStore | undefined;
/** The worker now (the last test kills it and starts another). */
let worker: ReturnType<Pipeline['spawn']>;
const bucket = `trawl-e2e-${randomUUID().slice(0, 8)}`;

let api: Api;
let until: Until;

beforeAll(async () => {
  [site, tiny, socks] = await Promise.all([
    createHardSite({ membersPageLimit: PAGE_LIMIT }),
    startHttpProxy({ credentials: { username: 'crawler', password: PROXY_PASSWORD } }),
    startSocksProxy(),
  ]);
  store = new ContentStore({ ...contentStoreConfig(), bucket });
  ({ pipeline, base, key, api, until, worker } = await startApiPipeline({
    env: {
      TRAWL_FETCH_ALLOW: [new URL(site.origin).port, tiny.port, socks.port].map((p) => `127.0.0.1:${p}`).join(','),
      TRAWL_S3_BUCKET: bucket,
      // A blocked page is retried on its slot's next session: enough tiers for a slot that holds every page.
      TRAWL_FETCH_RETRY_DELAYS_MS: '200,300,400,500',
      // A killed worker's partitions move after 6 s, not the default 30.
      TRAWL_SESSION_TIMEOUT_MS: '6000',
    },
    users: [`reacher-${randomBytes(3).toString('hex')}`],
    projectorCh: true,
  }));
  for (const [name, value] of [['members-user', expectedMembers.username], ['members-pass', expectedMembers.password], ['members-old-pass', 'not-the-password-7b2f'], ['proxy-pass', PROXY_PASSWORD]] as const) {
    expect((await api('POST', '/secrets', { name, value })).status).toBe(201);
  }
  // The website: its items, the site's header check, and the login by secret names.
  const saved = await api('PUT', `/websites/${spider}`, {
    name: 'Members', base_url: `${site.origin}/`, max_depth: 2, host_concurrency: 2, host_delay_ms: 50,
    item_root: expectedMembers.itemSelector, item_fields: [{ name: 'name', selector: expectedMembers.nameSelector }],
    user_agent: `${expectedMembers.userAgentToken}/1.0 (+https://ops.example)`,
    login: login('members-pass'), sessions: 1,
  });
  expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
}, 240_000);

afterAll(async () => {
  await pipeline?.stop();
  await Promise.all([site, tiny, socks].map((s) => s?.close()));
  if (store) {
    await store.delete(await store.list()).catch(() => undefined);
    store.close();
  }
});

function login(passwordSecret: string): Record<string, unknown> {
  return {
    kind: 'form', url: `${site.origin}${expectedMembers.loginUrl}`, form_selector: expectedMembers.formSelector,
    fields: { username: { secret: 'members-user' }, password: { secret: passwordSecret } },
    success_selector: expectedMembers.successSelector, failure_text: expectedMembers.failureText,
  };
}

/** The crawl with every option: the website's login, a session pool, a proxy pool per session. */
const withEverything = () => ({
  spider, start_urls: [`${site.origin}${expectedMembers.entry}`], depth: 2, sitemap: 'skip', ignore_cache: true, formats: ['html'],
  sessions: SESSIONS,
  proxies: [{ url: tiny.url, username: 'crawler', password: { secret: 'proxy-pass' } }, { url: socks.url }],
  proxy_rotation: 'per_session',
});

type Status = { status: string; error: { code: string | null; message: string | null } | null; counters: Record<string, number> };

async function submit(body: Record<string, unknown>): Promise<string> {
  const submitted = await api('POST', '/crawl', body);
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  return submitted.body.job_id as string;
}

async function ended(jobId: string): Promise<Status> {
  const r = await until(() => api('GET', `/jobs/${jobId}/status`), (a) => ['finished', 'failed', 'cancelled'].includes(a.body.status as string), 120_000, `job ${jobId} over`);
  return r.body as unknown as Status;
}

async function itemNames(jobId: string): Promise<string[]> {
  const answer = await until(() => api('GET', `/jobs/${jobId}/items?limit=100`), (r) => ((r.body.items as unknown[]) ?? []).length >= expectedMembers.names.length, 30_000, `the items of ${jobId}`);
  return (answer.body.items as { fields: { name: string } }[]).map((i) => i.fields.name).sort();
}

/** The worker's count of captcha blocks. */
async function captchaBlocks(): Promise<number> {
  const metrics = await fetch(`${worker.operatorUrl}/metrics`).then((r) => r.text());
  return Number(/\s(\d+)$/.exec(metrics.split('\n').find((l) => l.startsWith('trawl_worker_blocked_total{rule="captcha"}')) ?? '')?.[1] ?? 0);
}

/** Every member page was asked for with a valid session, through a proxy, each session's through one proxy. */
function expectMemberRequestsSound(from: number): void {
  const record = membersRecord(site.origin);
  const asked = record.requests.slice(from).filter((r) => isMemberPage(r.path));
  expect(asked.length).toBeGreaterThanOrEqual(expectedMembers.pages.length);
  expect(asked.filter((r) => !r.valid)).toEqual([]);
  expect(asked.filter((r) => !r.proxied)).toEqual([]);
  const routes = new Map<string, Set<string>>();
  for (const r of asked) routes.set(r.sid!, (routes.get(r.sid!) ?? new Set()).add(r.route));
  for (const [sid, via] of routes) expect([...via], `the requests of session ${sid.slice(0, 4)}…`).toHaveLength(1);
}

describe('the members area behind a login, rate-limited per session, through proxies', () => {
  it('gives every item with a login, a session pool and a proxy pool; no captcha stored; sessions replaced counted', async () => {
    const record = membersRecord(site.origin);
    const from = record.requests.length;
    const captchasBefore = record.captchas;
    const blocksBefore = await captchaBlocks();
    const tinyFrom = tiny.log().length;
    const socksFrom = socks.log().length;
    const jobId = await submit(withEverything());
    const status = await ended(jobId);
    expect(status).toMatchObject({ status: 'finished', counters: { pages_fetched: expectedMembers.pages.length, pages_failed: 0, pages_blocked: 0 } });
    expect(await itemNames(jobId)).toEqual([...expectedMembers.names].sort());
    expectMemberRequestsSound(from);

    // The captcha hit (a session of 3 pages and its login's landing is over the limit, and 7
    // pages over 3 sessions give one at least), each one a block, its session retired and replaced.
    const captchas = record.captchas - captchasBefore;
    expect(captchas).toBeGreaterThan(0);
    expect(await captchaBlocks() - blocksBefore).toBe(captchas);
    expect(status.counters.sessions_replaced).toBeGreaterThan(0);
    expect(status.counters.sessions_replaced).toBeLessThanOrEqual(captchas);
    // Each generation of a session logs in once: the pool's first logins and one per replacement at most.
    const logins = record.requests.slice(from).filter((r) => r.method === 'POST' && r.path === '/members/login').length;
    expect(logins).toBeGreaterThan(status.counters.sessions_replaced!);
    expect(logins).toBeLessThanOrEqual(SESSIONS + captchas);
    expect(record.failedLogins).toBe(0);
    // Through both kinds of proxy the pool has: tinyproxy's log or microsocks' (rendezvous hashing may put every session on one).
    expect(tiny.log().slice(tinyFrom).length + socks.log().slice(socksFrom).length).toBeGreaterThan(0);
    console.log(`REACH members crawl ${JSON.stringify({ captchas, sessionsReplaced: status.counters.sessions_replaced, logins, memberPageRequests: record.requests.slice(from).filter((r) => isMemberPage(r.path)).length })}`);

    // Stored: the member pages themselves, never the captcha.
    const pages = (await api('GET', `/jobs/${jobId}/pages?limit=100`)).body.pages as { fetch_id: string; url: string; ok: boolean }[];
    expect(new Set(pages.filter((p) => p.ok).map((p) => new URL(p.url).pathname))).toEqual(new Set(expectedMembers.pages));
    for (const page of pages.filter((p) => p.ok)) {
      const html = await fetch(`${base}/jobs/${jobId}/pages/${page.fetch_id}/content?format=html`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.text());
      expect(html).toContain('<title>');
      expect(html, page.url).not.toContain(expectedRateLimit.captchaText);
    }
  }, 120_000);

  it('without the right credentials, ends LOGIN_FAILED and fetches no member page', async () => {
    const record = membersRecord(site.origin);
    const from = record.requests.length;
    const failedBefore = record.failedLogins;
    const jobId = await submit({ ...withEverything(), login: login('members-old-pass') });
    const status = await ended(jobId);
    expect(status.status).toBe('failed');
    expect(status.error).toMatchObject({ code: 'LOGIN_FAILED' });
    expect(status.error!.message).toMatch(/failure text/);
    expect(status.counters.pages_fetched).toBe(0);
    expect(record.requests.slice(from).filter((r) => isMemberPage(r.path) && r.valid)).toEqual([]);
    // Once per session at most: a failed login is remembered, not repeated for every page.
    expect(record.failedLogins - failedBefore).toBeGreaterThan(0);
    expect(record.failedLogins - failedBefore).toBeLessThanOrEqual(SESSIONS);
  }, 120_000);

  it("without the login, the members' wall ends TRAWL_LOGIN_REQUIRED, saying to declare a login, not as an empty page", async () => {
    // Consent given and the header check passed, no login and no block_patterns: the member page
    // redirects to the login form, a built-in block rule (login_wall), not retried.
    const bare = `${spider}-no-login`;
    const saved = await api('PUT', `/websites/${bare}`, {
      name: 'Members, no login', base_url: `${site.origin}/`, max_depth: 2,
      item_root: expectedMembers.itemSelector, item_fields: [{ name: 'name', selector: expectedMembers.nameSelector }],
      user_agent: `${expectedMembers.userAgentToken}/1.0`,
    });
    expect(saved.status, JSON.stringify(saved.body)).toBeLessThan(300);
    const record = membersRecord(site.origin);
    const from = record.requests.length;
    const jobId = await submit({
      spider: bare, start_urls: [`${site.origin}${expectedMembers.entry}`], depth: 2, sitemap: 'skip', ignore_cache: true, formats: ['html'],
      cookies: { [new URL(site.origin).hostname]: ['consent=yes'] },
    });
    const status = await ended(jobId);
    expect(status).toMatchObject({ status: 'finished', counters: { pages_fetched: 0, pages_failed: 1, pages_blocked: 1, items_extracted: 0 } });
    expect(record.requests.slice(from).filter((r) => r.valid)).toEqual([]);
    // Asked once: nothing a retry could change.
    expect(record.requests.slice(from).filter((r) => r.path === expectedMembers.entry)).toHaveLength(1);
    const log = await fetch(`${base}/jobs/${jobId}/logs`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(30_000) }).then((r) => r.text());
    expect(log).toMatch(/TRAWL_LOGIN_REQUIRED login required: \S+\/members\/ redirected to a login form \(\S+\/members\/login\?next=\S+\); declare `login`/);
  }, 120_000);

  it('a rate-limited area crawled without sessions or proxies ends with its captchas TRAWL_BLOCKED, counted, not stored', async () => {
    const jobId = await submit({ start_urls: [`${site.origin}${expectedRateLimit.entry}`], depth: 1, sitemap: 'skip', ignore_cache: true, formats: ['html'] });
    const status = await ended(jobId);
    const pagesOfSite = expectedRateLimit.pages.length + 1; // the list, its pages, the notice
    const blocked = pagesOfSite - 1 - expectedRateLimit.limit; // the notice is no block without block_patterns
    expect(status).toMatchObject({ status: 'finished', counters: { pages_fetched: expectedRateLimit.limit + 1, pages_failed: blocked, pages_blocked: blocked } });
    const failed = (await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.pages]))
      .filter((e) => e.event.name === 'PageFailed').map((e) => e.event.value as PageFailed).filter((p) => p.job_id === jobId);
    expect(failed.map((f) => f.error_code)).toEqual(Array(blocked).fill('TRAWL_BLOCKED'));
  }, 120_000);

  it('a worker SIGKILLed mid-crawl: every item still, and both read models replay to the live ones', async () => {
    const record = membersRecord(site.origin);
    const from = record.requests.length;
    const first = worker;
    const jobId = await submit(withEverything());
    // Killed once the sessions are logged in and pages are coming, before the job is over.
    const atKill = await until(() => api('GET', `/jobs/${jobId}/status`), (r) => ((r.body.counters as { pages_fetched: number }).pages_fetched ?? 0) >= 1 || !['pending', 'running'].includes(r.body.status as string), 60_000, 'the first page');
    await pipeline.kill(first);
    expect(atKill.body.status).toBe('running');
    expect((atKill.body.counters as { pages_fetched: number }).pages_fetched).toBeLessThan(expectedMembers.pages.length);
    worker = pipeline.spawn('worker');
    const status = await ended(jobId);
    expect(status).toMatchObject({ status: 'finished', counters: { pages_fetched: expectedMembers.pages.length, pages_failed: 0 } });
    expect(await itemNames(jobId)).toEqual([...expectedMembers.names].sort());
    expectMemberRequestsSound(from);
    const ch = clickhouseOf(pipeline);
    await expectReadModelsEqualLog(pipeline, jobId, { ch, timeoutMs: 60_000 });
    const replay = await expectReplaysEqualLive(pipeline);
    console.log(`REACH replay after a worker SIGKILL ${JSON.stringify(replay)}`);
  }, 180_000);
});
