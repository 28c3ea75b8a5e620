/**
 * Sessions and logins over real sockets, without Kafka: a members' site behind a consent redirect
 * and a CSRF-checked login form, crawled by the PageProcessor with a pool of sessions kept in an
 * in-memory SessionStore (the worker's is trawl.sessions). Proves the jar carries what the site
 * sets, a login runs once per session, a pool that takes the sessions over (a worker after a crash)
 * logs in no more, a failed login is remembered, and a retired session starts afresh.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { samples, type CrawlSpec } from '@trawl/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlockedError, LoginFailedError, RedirectLoopError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { PageProcessor } from '../worker/page-processor.ts';
import { SessionPool, sessionOf, type SessionState, type SessionStore } from './session-pool.ts';
import { BlockClassifier } from '../blocks/block-classifier.ts';
import { SessionJar } from './session-jar.ts';

const KEY = randomBytes(8);
const csrf = (pre: string) => createHmac('sha256', KEY).update(pre).digest('hex');
let site: LocalServer;
let fetcher: HttpFetcher;
const logins: string[] = [];
let blockedSid: string | null = null;
const pages: { path: string; sid: string | null; valid: boolean }[] = [];

function cookie(req: IncomingMessage, name: string): string | null {
  const m = new RegExp(`(?:^|; )${name}=([^;]*)`).exec(req.headers.cookie ?? '');
  return m ? m[1]! : null;
}

async function body(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

const send = (res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void => void res.writeHead(status, { 'content-type': 'text/html', ...headers }).end(html);

function member(req: IncomingMessage, res: ServerResponse): void {
  const sid = cookie(req, 'sid');
  const valid = sid !== null && logins.includes(sid);
  pages.push({ path: req.url!, sid, valid });
  if (cookie(req, 'consent') !== 'yes') return send(res, 200, '<title>Before you continue</title>');
  if (!valid) return void res.writeHead(302, { location: '/login' }).end();
  send(res, 200, `<span class="member">ada</span><div class="item">${req.url}</div>`);
}

beforeAll(async () => {
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/robots.txt': (_q, r) => send(r, 404, ''),
    '/consent': (_q, r) => void r.writeHead(302, { location: '/login', 'set-cookie': 'consent=yes; Path=/' }).end(),
    '/login': (q, r) => {
      if (q.method === 'POST') {
        void body(q).then((form) => {
          const pre = cookie(q, 'pre');
          if (!pre || form.get('csrf') !== csrf(pre)) return send(r, 403, 'csrf');
          if (form.get('user') !== 'ada' || form.get('pass') !== 'open sesame') return send(r, 200, '<p>Invalid credentials</p><form><input type="password" name="pass"></form>');
          const sid = randomBytes(6).toString('hex');
          logins.push(sid);
          r.writeHead(303, { location: '/m/home', 'set-cookie': `sid=${sid}; Path=/m; HttpOnly` }).end();
        });
        return;
      }
      const pre = randomBytes(6).toString('hex');
      send(r, 200, `<form action="/login" method="post"><input type="hidden" name="csrf" value="${csrf(pre)}"><input name="user"><input type="password" name="pass"></form>`, { 'set-cookie': `pre=${pre}; Path=/` });
    },
  };
  for (let i = 0; i < 12; i++) routes[`/m/${i}`] = member;
  // A cookie wall that sets its cookie and sends the browser back to the same page.
  routes['/wall'] = (req, res) => (cookie(req, 'seen') === '1' ? send(res, 200, '<p>past the wall</p>') : void res.writeHead(302, { location: '/wall', 'set-cookie': 'seen=1; Path=/' }).end());
  // Post, redirect, get — to the same URL.
  routes['/prg'] = (req, res) => (req.method === 'POST' ? void res.writeHead(303, { location: '/prg' }).end() : send(res, 200, '<p>got</p>'));
  // Blocks the first session that asks (a per-session rate limit): a challenge page for it, members' pages for the next.
  routes['/m/limited'] = (req, res) => {
    const sid = cookie(req, 'sid');
    if (sid !== null && (blockedSid === null || blockedSid === sid)) {
      blockedSid = sid;
      return send(res, 200, '<title>Just a moment</title><p>Verify you are human</p>');
    }
    member(req, res);
  };
  routes['/m/home'] = member;
  site = await startLocalServer(routes);
  fetcher = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), totalTimeoutMs: 10_000 });
});

afterAll(async () => {
  await fetcher?.close();
  await site?.close();
});

/** The store a worker would have on trawl.sessions, in memory: every save, and the latest per session. */
class MemoryStore implements SessionStore {
  readonly saves: SessionState[] = [];
  async load(jobId: string, session: number): Promise<SessionState | undefined> {
    return this.saves.filter((s) => s.jobId === jobId && s.session === session).sort((a, b) => b.version - a.version)[0];
  }
  async save(state: SessionState): Promise<void> {
    this.saves.push(state);
  }
}

function loginSpec(password: string, sessions: number): CrawlSpec {
  return testSpec({
    sessions,
    login: { kind: 'form', url: `${site.origin}/consent`, form_selector: null, fields: { user: 'ada', pass: password }, actions: [], success_selector: '.member', success_url_pattern: '/m/home$', failure_text: 'Invalid credentials' },
    item_root: '.item',
    item_fields: [{ name: 'path', selector: '', attribute: null, xpath: null, transforms: [] }],
  });
}

function processor(store: SessionStore) {
  const sessions = new SessionPool({ store, http: fetcher });
  return new PageProcessor({ http: fetcher, robots: new RobotsCache(fetcher), limiter: new HostLimiter(), sessions, blocks: new BlockClassifier() });
}

const fetchOf = (job: string, path: string, spec: CrawlSpec) => ({ ...samples.FetchRequested, job_id: job, url: `${site.origin}${path}`, depth: 1, referrer: null, spec, params: {}, cached: null });

describe('a pool of sessions with a form login', () => {
  it('logs each session in once (consent and CSRF cookies carried), and every page carries its session', async () => {
    const spec = loginSpec('open sesame', 3);
    const from = { logins: logins.length, pages: pages.length };
    const paths = Array.from({ length: 12 }, (_, i) => `/m/${i}`);
    const used = new Set(paths.map((p) => sessionOf(`${site.origin}${p}`, 3)));
    expect(used.size).toBeGreaterThan(1);
    const worker = processor(new MemoryStore());
    const again = await Promise.all(paths.map((p) => worker.process(fetchOf('a0000000-0000-4000-8000-000000000002', p, spec))));
    expect(again.every((p) => p.items.length === 1)).toBe(true);
    expect(logins.length - from.logins).toBe(used.size);
    const fetched = pages.slice(from.pages).filter((p) => p.path !== '/m/home');
    expect(fetched).toHaveLength(12);
    expect(fetched.every((p) => p.valid)).toBe(true);
  });

  it('resumes on another worker from the saved state: no login again, the same session cookie', async () => {
    const job = 'a0000000-0000-4000-8000-000000000003';
    const spec = loginSpec('open sesame', 1);
    const store = new MemoryStore();
    await processor(store).process(fetchOf(job, '/m/1', spec));
    const before = logins.length;
    const from = pages.length;
    const page = await processor(store).process(fetchOf(job, '/m/2', spec));
    expect(page.items).toHaveLength(1);
    expect(logins.length).toBe(before);
    expect(pages.at(-1)).toMatchObject({ path: '/m/2', valid: true, sid: logins.at(-1) });
    expect(pages.length - from).toBe(1);
    expect(store.saves.map((s) => s.reason)).toEqual(['login']);
    expect(store.saves[0]).toMatchObject({ login: 'done', logins: 1, version: 1, generation: 0 });
  });

  it('remembers a failed login: the job fails LOGIN_FAILED, the site is not asked again with the same credentials', async () => {
    const job = 'a0000000-0000-4000-8000-000000000004';
    const spec = loginSpec('wrong', 1);
    const store = new MemoryStore();
    const worker = processor(store);
    const err = await worker.process(fetchOf(job, '/m/1', spec)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoginFailedError);
    expect((err as Error).message).toBe(`form login at ${site.origin}/consent: the page after the login shows the failure text`);
    expect((err as Error).message).not.toContain('wrong');
    const from = site.hits.length;
    await expect(worker.process(fetchOf(job, '/m/2', spec))).rejects.toBeInstanceOf(LoginFailedError);
    await expect(processor(store).process(fetchOf(job, '/m/3', spec))).rejects.toBeInstanceOf(LoginFailedError);
    // A new worker reads robots.txt; nothing else.
    expect(site.hits.slice(from).filter((h) => h !== '/robots.txt')).toEqual([]);
    expect(store.saves.map((s) => s.login)).toEqual(['failed']);
  });

  it('retires a session and replaces it: a new generation, logged in afresh', async () => {
    const job = 'a0000000-0000-4000-8000-000000000005';
    const spec = loginSpec('open sesame', 1);
    const store = new MemoryStore();
    const pool = new SessionPool({ store, http: fetcher });
    const first = (await pool.lease({ job_id: job, url: `${site.origin}/m/1`, event_id: 'e1' }, spec, null))!;
    const sid = logins.at(-1);
    await first.retire('TRAWL_BLOCKED', 'e1');
    await first.retire('TRAWL_BLOCKED', 'e2');
    const second = (await pool.lease({ job_id: job, url: `${site.origin}/m/1`, event_id: 'e3' }, spec, null))!;
    expect(second.generation).toBe(1);
    expect(logins.at(-1)).not.toBe(sid);
    expect(store.saves.map((s) => [s.generation, s.login, s.reason])).toEqual([[0, 'done', 'login'], [1, 'none', 'retired: TRAWL_BLOCKED'], [1, 'done', 'login']]);
    expect(store.saves.at(-1)!.logins).toBe(2);
  });

  it('retires the session a block met, and the retried page goes through its fresh replacement', async () => {
    const job = 'a0000000-0000-4000-8000-000000000006';
    const spec = { ...loginSpec('open sesame', 1), block_patterns: ['Verify you are human'] };
    const store = new MemoryStore();
    const worker = processor(store);
    await expect(worker.process(fetchOf(job, '/m/limited', spec))).rejects.toBeInstanceOf(BlockedError);
    const page = await worker.process(fetchOf(job, '/m/limited', spec));
    expect(page.items).toHaveLength(1);
    expect(pages.at(-1)).toMatchObject({ path: '/m/limited', valid: true });
    expect(pages.at(-1)!.sid).not.toBe(blockedSid);
    expect(store.saves.map((s) => [s.generation, s.login, s.reason])).toEqual([[0, 'done', 'login'], [1, 'none', 'retired: TRAWL_BLOCKED'], [1, 'done', 'login']]);
  });
});

describe("the HTTP fetcher with a session's profile", () => {
  it('passes a cookie wall that redirects to the same page once its cookie is kept (without a session: a loop)', async () => {
    const jar = SessionJar.fromSpec(testSpec());
    const r = await fetcher.fetch(`${site.origin}/wall`, { request: jar.profile(null) });
    expect(r.status).toBe(200);
    expect(r.body).toContain('past the wall');
    await expect(fetcher.fetch(`${site.origin}/wall`)).rejects.toBeInstanceOf(RedirectLoopError);
  });

  it('follows a form POST answered 303 to the same URL with a GET, not taking it for a loop', async () => {
    const r = await fetcher.fetch(`${site.origin}/prg`, { form: 'a=1' });
    expect(r).toMatchObject({ status: 200, redirects: [`${site.origin}/prg`] });
  });
});
