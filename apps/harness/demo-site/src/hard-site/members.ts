/**
 * A members' area, what sessions and logins are for: a consent wall, a login form with a CSRF
 * token, and member pages that answer only with the session cookie the login set.
 *
 * - Consent: any page but `/members/consent` answers an interstitial ("Before you continue", no
 *   links) until the request carries `consent=yes`. `/members/consent?next=<path>` sets that
 *   cookie and redirects to `next` — a login URL through it gives the session its consent.
 * - A header check: a request whose User-Agent lacks {@link expectedMembers.userAgentToken} gets 403.
 * - Login: `GET /members/login` sets a pre-login cookie and serves the form, whose hidden `csrf`
 *   field is tied to that cookie; `POST /members/login` needs both, and the right username and
 *   password: then it sets `members_sid` and redirects to `/members/`; the wrong ones answer the
 *   form again with {@link expectedMembers.failureText}.
 * - Member pages (`/members/`, `/members/page/N`) without a valid session redirect to the login.
 *   Page N lists {@link MEMBER_ITEMS_PER_PAGE} items (`div.member-item`, name in `.name`).
 *
 * - A per-session rate limit (the site's `membersPageLimit` option, off by default): a login
 *   session may fetch that many member pages (the login's own landing on `/members/` counts); past
 *   that, every member page it asks for answers **200** with the captcha page of rate-limit.ts. A
 *   crawler that keeps the session meets only captchas; one that retires it and logs in afresh
 *   gets every page.
 *
 * Every request is recorded per site ({@link membersRecord}): which session cookie it carried
 * and whether it was valid, whether it came through a proxy, every successful login, and the
 * captchas served — so a test can prove that no member page was fetched without the session, and
 * count logins.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { escapeHtml, html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';
import { cameThroughProxy } from './proxy-only.ts';
import { CAPTCHA_PAGE } from './rate-limit.ts';

export const MEMBER_PAGES = 6;
export const MEMBER_ITEMS_PER_PAGE = 5;

const names = Array.from({ length: MEMBER_PAGES * MEMBER_ITEMS_PER_PAGE }, (_, i) => `Member item ${i + 1}`);
const memberPages = ['/members/', ...Array.from({ length: MEMBER_PAGES }, (_, i) => `/members/page/${i + 1}`)];

/** What a complete crawl of the feature gives, and what it takes. */
export const expectedMembers = {
  entry: '/members/',
  /** The login URL through the consent wall: the session gets its consent, then the form. */
  loginUrl: '/members/consent?next=/members/login',
  formSelector: 'form#login',
  username: 'ada',
  password: 'correct horse battery staple',
  failureText: 'Invalid username or password',
  successSelector: '.member',
  userAgentToken: 'MembersBot',
  /** Pages behind the login a complete crawl fetches. */
  pages: memberPages,
  itemSelector: 'div.member-item',
  nameSelector: '.name',
  names,
} as const;

export interface MembersRequest {
  readonly method: string;
  readonly path: string;
  /** The `members_sid` cookie it carried (null: none). */
  readonly sid: string | null;
  /** Whether that cookie was a session the site had issued. */
  readonly valid: boolean;
  readonly consent: boolean;
  /** Whether it came through a proxy (proxy-only.ts's rule). */
  readonly proxied: boolean;
  /** Which way it came: `via <Via header>` (an HTTP proxy), else the peer's address (a SOCKS proxy's egress, or direct). */
  readonly route: string;
}

export interface MembersRecord {
  readonly requests: MembersRequest[];
  /** Session ids issued by successful logins, in order. */
  readonly logins: string[];
  /** Failed login attempts (wrong credentials or CSRF). */
  failedLogins: number;
  /** Captcha pages served to member-page requests past `membersPageLimit`. */
  captchas: number;
  /** Member pages asked for per session id (the limit counts these). */
  readonly pagesBySid: Map<string, number>;
}

const records = new Map<string, MembersRecord>();
const CSRF_KEY = randomBytes(16);

/** What the members' area of the site at `origin` has seen. */
export function membersRecord(origin: string): MembersRecord {
  let r = records.get(origin);
  if (!r) records.set(origin, (r = { requests: [], logins: [], failedLogins: 0, captchas: 0, pagesBySid: new Map() }));
  return r;
}

/** Whether a request path is a page behind the login. */
export function isMemberPage(path: string): boolean {
  return path === '/members/' || /^\/members\/page\/\d+$/.test(path);
}

function cookies(req: IncomingMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i > 0) out.set(part.slice(0, i).trim(), part.slice(i + 1).trim());
  }
  return out;
}

const csrfOf = (pre: string) => createHmac('sha256', CSRF_KEY).update(pre).digest('hex').slice(0, 32);

function loginPage(error: boolean): string {
  return `<!doctype html><title>Sign in</title>${error ? `<p class="error">${expectedMembers.failureText}</p>` : ''}
<form id="search" action="/members/search" method="get"><input name="q"></form>
<form id="login" action="/members/login" method="post"><input type="hidden" name="csrf" value="{{csrf}}"><input type="text" name="username"><input type="password" name="password"><input type="checkbox" name="remember" value="1" checked><button type="submit">Sign in</button></form>`;
}

async function formOf(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

export const members: HardSiteFeature = {
  prefix: '/members/',
  entry: '/members/',
  async handle(req, res, url, ctx) {
    const record = membersRecord(ctx.origin);
    const jar = cookies(req);
    const sid = jar.get('members_sid') ?? null;
    const valid = sid !== null && record.logins.includes(sid);
    const consent = jar.get('consent') === 'yes';
    record.requests.push({ method: req.method ?? 'GET', path: url.pathname, sid, valid, consent, proxied: cameThroughProxy(req), route: req.headers.via ? `via ${String(req.headers.via)}` : (req.socket.remoteAddress ?? '') });
    if (!(req.headers['user-agent'] ?? '').includes(expectedMembers.userAgentToken)) {
      html(res, 403, '<!doctype html><title>Forbidden</title><p>Unknown client.</p>');
      return;
    }
    if (url.pathname === '/members/consent') {
      const next = url.searchParams.get('next') ?? '/members/';
      res.writeHead(302, { location: next.startsWith('/members/') ? next : '/members/', 'set-cookie': 'consent=yes; Path=/; SameSite=Lax' }).end();
      return;
    }
    if (!consent) {
      html(res, 200, '<!doctype html><title>Before you continue</title><p>We use cookies.</p><form action="/members/consent" method="post"><button>Accept</button></form>');
      return;
    }
    if (url.pathname === '/members/login') {
      if (req.method === 'POST') {
        const form = await formOf(req);
        const pre = jar.get('members_pre');
        if (!pre || form.get('csrf') !== csrfOf(pre)) {
          record.failedLogins++;
          html(res, 403, '<!doctype html><title>Forbidden</title><p>CSRF check failed.</p>');
          return;
        }
        if (form.get('username') !== expectedMembers.username || form.get('password') !== expectedMembers.password) {
          record.failedLogins++;
          html(res, 200, loginPage(true).replace('{{csrf}}', csrfOf(pre)));
          return;
        }
        const issued = randomBytes(12).toString('hex');
        record.logins.push(issued);
        res.writeHead(302, { location: '/members/', 'set-cookie': `members_sid=${issued}; Path=/members; HttpOnly; SameSite=Lax` }).end();
        return;
      }
      const pre = randomBytes(8).toString('hex');
      html(res, 200, loginPage(false).replace('{{csrf}}', csrfOf(pre)), { 'set-cookie': `members_pre=${pre}; Path=/members; HttpOnly` });
      return;
    }
    if (!isMemberPage(url.pathname)) {
      html(res, 404, '<!doctype html><title>Not found</title>');
      return;
    }
    if (!valid) {
      res.writeHead(302, { location: `/members/login?next=${encodeURIComponent(url.pathname)}` }).end();
      return;
    }
    if (ctx.membersPageLimit !== undefined) {
      const asked = (record.pagesBySid.get(sid) ?? 0) + 1;
      record.pagesBySid.set(sid, asked);
      if (asked > ctx.membersPageLimit) {
        record.captchas++;
        html(res, 200, CAPTCHA_PAGE);
        return;
      }
    }
    const nav = memberPages.slice(1).map((p, i) => `<a href="${p}">page ${i + 1}</a>`).join(' ');
    if (url.pathname === '/members/') {
      html(res, 200, `<!doctype html><title>Members</title><p>Welcome, <span class="member">${expectedMembers.username}</span></p><nav>${nav}</nav>`);
      return;
    }
    const n = Number(url.pathname.slice('/members/page/'.length));
    if (n < 1 || n > MEMBER_PAGES) {
      html(res, 404, '<!doctype html><title>Not found</title>');
      return;
    }
    const items = names
      .slice((n - 1) * MEMBER_ITEMS_PER_PAGE, n * MEMBER_ITEMS_PER_PAGE)
      .map((name) => `<div class="member-item"><h2 class="name">${escapeHtml(name)}</h2></div>`)
      .join('');
    html(res, 200, `<!doctype html><title>Members page ${n}</title><span class="member">${expectedMembers.username}</span>${items}<nav>${nav}</nav>`);
  },
};
