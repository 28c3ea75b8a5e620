/**
 * A login's requests go through the job's politeness as its pages do (login-gate.ts), over real
 * sockets: a job spacing its requests 300 ms apart on a host sees its login's GET, its POST and its
 * pages each start at least that far apart, with `host_concurrency: 1` and deferral on (the worker's
 * setting) — the POST waits rather than being deferred, nothing deadlocks — and a login page that
 * robots.txt disallows is never requested: the login fails saying so.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { samples, type CrawlSpec, type LoginSpec } from '@trawl/schemas';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostBusyError, LoginFailedError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { HostLimiter } from '../politeness/host-limiter.ts';
import { RobotsCache } from '../politeness/robots.ts';
import { testSpec } from '../rules/test-spec.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { parseAllowList } from '../safety/allow-list.ts';
import { startLocalServer, type LocalServer } from '../testing/local-server.ts';
import { PageProcessor, type ProcessedPage } from '../worker/page-processor.ts';
import { logIn, type LoginGate } from './form-login.ts';
import { SessionPool, type SessionState, type SessionStore } from './session-pool.ts';
import { SessionJar } from './session-jar.ts';

let site: LocalServer;
let http: HttpFetcher;
/** Requests other than robots.txt, in the order they arrived. */
const arrivals: { method: string; path: string; at: number }[] = [];

const send = (res: ServerResponse, html: string, headers: Record<string, string> = {}): void => void res.writeHead(200, { 'content-type': 'text/html', ...headers }).end(html);
const FORM = '<form action="/login" method="post"><input name="user"><input type="password" name="pass"></form>';

function recorded(route: (req: IncomingMessage, res: ServerResponse) => void) {
  return (req: IncomingMessage, res: ServerResponse) => {
    arrivals.push({ method: req.method!, path: req.url!, at: performance.now() });
    route(req, res);
  };
}

beforeAll(async () => {
  const routes: Record<string, (req: IncomingMessage, res: ServerResponse) => void> = {
    '/robots.txt': (_q, r) => void r.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private-login\n'),
    '/login': recorded((q, r) => (q.method === 'POST' ? send(r, '<span class="member">ada</span>', { 'set-cookie': 'sid=s1; Path=/' }) : send(r, FORM))),
    '/private-login': recorded((_q, r) => send(r, FORM)),
  };
  for (let i = 0; i < 3; i++) routes[`/m/${i}`] = recorded((q, r) => send(r, `<div class="item">${/sid=s1/.test(q.headers.cookie ?? '') ? 'member' : 'anonymous'}</div>`));
  site = await startLocalServer(routes);
  http = new HttpFetcher({ policy: new AddressPolicy(parseAllowList('127.0.0.1/32')), totalTimeoutMs: 10_000 });
});

afterAll(async () => {
  await http?.close();
  await site?.close();
});

class MemoryStore implements SessionStore {
  private readonly states = new Map<string, SessionState>();
  async load(jobId: string, session: number): Promise<SessionState | undefined> {
    return this.states.get(`${jobId}:${session}`);
  }
  async save(state: SessionState): Promise<void> {
    this.states.set(`${state.jobId}:${state.session}`, state);
  }
}

function loginOf(path: string): LoginSpec {
  return { kind: 'form', url: `${site.origin}${path}`, form_selector: null, fields: { user: 'ada', pass: 'open sesame' }, actions: [], success_selector: '.member', success_url_pattern: null, failure_text: null };
}

function spec(login: LoginSpec, politeness: Partial<CrawlSpec> = {}): CrawlSpec {
  return testSpec({ sessions: 1, login, item_root: '.item', item_fields: [{ name: 'who', selector: '', attribute: null, xpath: null, transforms: [] }], ...politeness });
}

const fetchOf = (job: string, path: string, crawl: CrawlSpec) => ({ ...samples.FetchRequested, job_id: job, url: `${site.origin}${path}`, depth: 1, referrer: null, spec: crawl, params: {}, cached: null });

/** As the worker does with a deferred fetch: parked until its due time, then tried again. */
async function processParked(worker: PageProcessor, request: ReturnType<typeof fetchOf>): Promise<ProcessedPage> {
  for (;;) {
    try {
      return await worker.process(request);
    } catch (err) {
      if (!(err instanceof HostBusyError)) throw err;
      await sleep(Math.max(0, err.dueAt - Date.now()));
    }
  }
}

describe("a login's requests and the job's politeness", () => {
  it('spaces the login GET, its POST and the pages by the job\'s host_delay_ms, one at a time, with deferral on and no deadlock', async () => {
    const job = 'b0000000-0000-4000-8000-000000000001';
    const crawl = spec(loginOf('/login'), { host_delay_ms: 300, host_concurrency: 1 });
    const limiter = new HostLimiter({ deferAfterMs: 100 });
    // When each request of the job (robots.txt aside) is handed to the fetcher: after its slot, on the limiter's clock.
    const starts: number[] = [];
    const recorded = { fetch: ((url, options) => (starts.push(Date.now()), http.fetch(url, options))) as HttpFetcher['fetch'] };
    const worker = new PageProcessor({ http: recorded, robots: new RobotsCache(http), limiter, sessions: new SessionPool({ store: new MemoryStore(), http: recorded }) });
    const from = arrivals.length;
    const pages = await Promise.all([0, 1, 2].map((i) => processParked(worker, fetchOf(job, `/m/${i}`, crawl))));
    expect(pages.map((p) => p.items[0]?.fields)).toEqual([{ who: 'member' }, { who: 'member' }, { who: 'member' }]);
    const seen = arrivals.slice(from);
    expect(seen.slice(0, 2).map((a) => `${a.method} ${a.path}`)).toEqual(['GET /login', 'POST /login']);
    expect(seen).toHaveLength(5);
    expect(starts).toHaveLength(5);
    // A lower bound only: the limiter never starts two of the job's requests closer than its delay.
    const gaps = starts.slice(1).map((at, i) => at - starts[i]!);
    // (Less a few ms: the recorder reads the clock a moment after the limiter did.)
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(290);
  }, 20_000);

  it('does not request a login page robots.txt disallows: the login fails, saying so', async () => {
    const job = 'b0000000-0000-4000-8000-000000000002';
    const worker = new PageProcessor({ http, robots: new RobotsCache(http), limiter: new HostLimiter(), sessions: new SessionPool({ store: new MemoryStore(), http }) });
    const err = await worker.process(fetchOf(job, '/m/0', spec(loginOf('/private-login')))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LoginFailedError);
    expect((err as Error).message).toBe(`robots.txt disallows the login's request to ${site.origin}/private-login`);
    expect(arrivals.filter((a) => a.path === '/private-login')).toEqual([]);
  });

  it('sends a browser login through the gate as one first request on the login URL', async () => {
    const steps: { url: string; first: boolean }[] = [];
    const gate: LoginGate = (url, step, sendIt) => {
      steps.push({ url, first: step.first });
      return sendIt();
    };
    const login: LoginSpec = { ...loginOf('/login'), kind: 'browser', fields: {}, actions: [{ type: 'click', selector: 'button', text: null, key: null, ms: null, times: null, full_page: false }] };
    const browser = async () => ({ finalUrl: `${site.origin}/login`, status: 200, body: '<span class="member">ada</span>', cookies: [] });
    await logIn(login, SessionJar.fromSpec(testSpec()).profile(null), { http, browser }, { gate });
    expect(steps).toEqual([{ url: `${site.origin}/login`, first: true }]);
  });
});
