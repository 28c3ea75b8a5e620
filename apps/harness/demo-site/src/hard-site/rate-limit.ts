/**
 * A per-session rate limit that answers a captcha, as shops and job boards do: each session (the
 * `rl_sid` cookie this module sets; without one, the client's address) may fetch
 * {@link expectedRateLimit.limit} pages per {@link expectedRateLimit.windowMs}; past that, every
 * page answers **200** with a captcha page (an hCaptcha form and "Verify you are human") — the
 * case a crawler stores as content unless it detects blocks. A crawl without sessions, or one that
 * keeps a blocked session, meets the captcha; one that retires a blocked session and starts a fresh
 * one (a new cookie) gets every page.
 *
 * `/rate-limit/` links {@link RATE_LIMIT_PAGES} pages `/rate-limit/p/N`, each a `div.item` with its
 * title in `.title`; `/rate-limit/notice` answers 200 with a notice that matches
 * {@link expectedRateLimit.blockPattern} (a block a website declares in `block_patterns`), and is
 * not rate limited. Captchas served are counted per site ({@link rateLimitRecord}).
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import { escapeHtml, html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';

export const RATE_LIMIT_PAGES = 12;

const titles = Array.from({ length: RATE_LIMIT_PAGES }, (_, i) => `Limited item ${i + 1}`);

/** What a complete crawl of the feature gives, and how the site's blocks look. */
export const expectedRateLimit = {
  entry: '/rate-limit/',
  pages: ['/rate-limit/', ...titles.map((_, i) => `/rate-limit/p/${i + 1}`)],
  itemSelector: 'div.item',
  titleSelector: '.title',
  titles,
  /** Pages one session may fetch per window. */
  limit: 5,
  windowMs: 60_000,
  /** The captcha page's marker text. */
  captchaText: 'Verify you are human',
  /** The declared-block page, and a block pattern (RE2) that matches it and no ordinary page. */
  noticePath: '/rate-limit/notice',
  blockPattern: 'Access temporarily restricted \\(code RL-\\d+\\)',
} as const;

/** Per site (origin): captchas served, and requests per session key. */
export interface RateLimitRecord {
  captchas: number;
  notices: number;
  readonly sessions: Map<string, number[]>;
}

const records = new Map<string, RateLimitRecord>();

/** What the site at `origin` answered so far. */
export function rateLimitRecord(origin: string): RateLimitRecord {
  let r = records.get(origin);
  if (!r) records.set(origin, (r = { captchas: 0, notices: 0, sessions: new Map() }));
  return r;
}

function sessionOf(req: IncomingMessage): { key: string; setCookie: string | null } {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === 'rl_sid' && value.join('=')) return { key: `sid:${value.join('=')}`, setCookie: null };
  }
  const sid = randomBytes(8).toString('hex');
  // A client without the cookie is counted by its address until it sends the one given here.
  return { key: `addr:${req.socket.remoteAddress ?? '?'}`, setCookie: `rl_sid=${sid}; Path=/rate-limit/; SameSite=Lax` };
}

/** The captcha page the site answers past a limit (members.ts answers it too). */
export const CAPTCHA_PAGE = `<!doctype html><html><head><title>One more step</title><script src="https://js.hcaptcha.com/1/api.js" async defer></script></head>
<body><form method="post" action="/rate-limit/verify"><h1>${expectedRateLimit.captchaText}</h1><div class="h-captcha" data-sitekey="10000000-ffff-ffff-ffff-000000000001"></div><button>Continue</button></form></body></html>`;

export const rateLimit: HardSiteFeature = {
  prefix: '/rate-limit/',
  entry: '/rate-limit/',
  handle(req, res, url, ctx) {
    const record = rateLimitRecord(ctx.origin);
    if (url.pathname === expectedRateLimit.noticePath) {
      record.notices++;
      html(res, 200, '<!doctype html><title>Notice</title><div class="notice">Access temporarily restricted (code RL-7). Try again later.</div>');
      return;
    }
    const { key, setCookie } = sessionOf(req);
    const now = Date.now();
    const times = (record.sessions.get(key) ?? []).filter((t) => now - t < expectedRateLimit.windowMs);
    times.push(now);
    record.sessions.set(key, times);
    const headers: Record<string, string> = setCookie ? { 'set-cookie': setCookie } : {};
    if (times.length > expectedRateLimit.limit) {
      record.captchas++;
      html(res, 200, CAPTCHA_PAGE, headers);
      return;
    }
    if (url.pathname === '/rate-limit/') {
      const links = titles.map((_, i) => `<li><a href="/rate-limit/p/${i + 1}">item ${i + 1}</a></li>`).join('');
      html(res, 200, `<!doctype html><title>Limited list</title><ul>${links}</ul><a href="notice">notice</a>`, headers);
      return;
    }
    const m = /^\/rate-limit\/p\/(\d+)$/.exec(url.pathname);
    const n = m ? Number(m[1]) : 0;
    if (n < 1 || n > RATE_LIMIT_PAGES) {
      html(res, 404, '<!doctype html><title>Not found</title>', headers);
      return;
    }
    html(res, 200, `<!doctype html><title>${escapeHtml(titles[n - 1]!)}</title><div class="item"><h2 class="title">${escapeHtml(titles[n - 1]!)}</h2></div>`, headers);
  },
};
