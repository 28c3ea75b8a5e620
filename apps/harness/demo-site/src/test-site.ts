import type { CrawlSpec } from '@trawl/schemas';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AccessLog } from './access-log.ts';
import { html, serve } from './serve.ts';

export interface TestSiteOptions {
  /** Content pages, home included (home is page 0). */
  readonly pages?: number;
  /** Children per page: the pages form a tree, so every page has one depth whatever the crawl order. */
  readonly linksPerPage?: number;
  /** Items (`article.item`) on every content page. */
  readonly itemsPerPage?: number;
  /** Add the trap routes, linked from the home page. */
  readonly traps?: boolean;
  /** How long `/trap/slow` sleeps before answering (longer than the fetch timeout under test). */
  readonly slowMs?: number;
  /** Failures of `/trap/flaky` before it succeeds. */
  readonly flakyFailures?: number;
  /** Calendar months beyond which `/calendar/…` answers 404 (a safety net for tests, far past any depth). */
  readonly calendarMonths?: number;
  /**
   * Content pages carry HTTP validators and answer conditional requests with 304 (default true):
   * page i has an ETag and a Last-Modified when i % 3 is 0, an ETag only when 1, a Last-Modified
   * only when 2, so a recrawl exercises If-None-Match and If-Modified-Since alike.
   */
  readonly validators?: boolean;
  /** Pads each content page with text to about this many bytes (default: no padding), for byte counts like a real site's. */
  readonly pageBytes?: number;
  readonly port?: number;
}

/** What a correct crawl of the site must do, computed from the site's definition alone. */
export interface ExpectedCrawl {
  /** Every URL the frontier must request (FetchRequested), each exactly once: fetched ∪ failed. */
  readonly requested: readonly string[];
  /** URLs that end as PageFetched (the redirect chain is requested by its first URL). */
  readonly fetched: readonly string[];
  /**
   * URLs that end as PageFailed: redirect loop, always-503, slow, 20 MB, and the robots.txt-disallowed
   * page (refused by the worker without any HTTP request).
   */
  readonly failed: readonly string[];
  /** URLs the server must never see (check the access log): robots-disallowed, off-host. */
  readonly neverServed: readonly string[];
  /** URLs the frontier must not even request: the off-host link. */
  readonly notRequested: readonly string[];
  /** Of `fetched`, the ones whose body is HTML and parsed (the PDF is not). */
  readonly parsed: readonly string[];
  /** Items over all parsed pages. */
  readonly items: number;
}

export interface TestSite {
  readonly origin: string;
  readonly port: number;
  readonly accessLog: AccessLog;
  /** Seed URL (the home page). */
  readonly home: string;
  /** Trap URLs by name (absolute). */
  readonly traps: Readonly<Record<TrapName, string>>;
  /** A spec matching the site's markup (items), for crawl tests. */
  readonly spec: Pick<CrawlSpec, 'item_root' | 'item_fields'>;
  /** What a crawl with this max_depth (and a max_pages that does not bind) must do. */
  expected(maxDepth: number): ExpectedCrawl;
  /** The absolute URL of content page i (as a crawler requests it after normalisation). */
  urlOf(i: number): string;
  /**
   * Edits content pages: each gets a new revision — other text, a new ETag, a Last-Modified one
   * second or more after the previous — so a conditional request for it is answered 200, not 304.
   * Returns their URLs.
   */
  change(pages: readonly number[]): string[];
  /** Bytes the server has written to its connections so far, headers included. */
  bytesSent(): number;
  /** Resets per-path counters (flaky) and the access log, for the next job. */
  reset(): void;
  /**
   * Every content page answers `ms` later from now on (0: at once, the default): a test slows a
   * crawl down to act in its middle, then lets it run at full speed.
   */
  setLatency(ms: number): void;
  close(): Promise<void>;
}

export type TrapName =
  | 'redirectChain'
  | 'redirectLoop'
  | 'calendar'
  | 'flaky'
  | 'always503'
  | 'slow'
  | 'pdf'
  | 'huge'
  | 'robotsDisallowed'
  | 'offHost';

const TRAP_PATHS: Record<Exclude<TrapName, 'offHost'>, string> = {
  redirectChain: '/trap/redirect-chain',
  redirectLoop: '/trap/redirect-loop',
  calendar: '/calendar/2026/01',
  flaky: '/trap/flaky',
  always503: '/trap/always-503',
  slow: '/trap/slow',
  pdf: '/trap/doc.pdf',
  huge: '/trap/huge',
  robotsDisallowed: '/private/secret',
};

/**
 * A generated site of known shape for crawl tests. Pages `0..pages-1` form a tree (page i's children
 * are i·k+1 … i·k+k), so each page's depth is fixed and the expected URL set is plain arithmetic.
 * Each page also links to its parent and home (already seen), and to each child a second time in a
 * disguise a crawler must see through: with a fragment, with `utm_*` parameters, or (for the pages
 * whose URL has a query) with the query in another order. Every 5th page lives at `/q?id=N&kind=page`.
 *
 * With `traps`, the home page also links to: a 3-hop redirect chain, a redirect loop, an endless
 * calendar (`/calendar/2026/01` → next month, forever), a page that fails twice then succeeds, one that
 * always answers 503, a slow one, a PDF, a 20 MB page, a robots.txt-disallowed page, and an off-host
 * link (same server under the name `localhost`, told apart by the Host header in the access log).
 */
export async function createTestSite(options: TestSiteOptions = {}): Promise<TestSite> {
  const pages = options.pages ?? 50;
  const k = options.linksPerPage ?? 3;
  const itemsPerPage = options.itemsPerPage ?? 2;
  const traps = options.traps ?? false;
  const slowMs = options.slowMs ?? 15_000;
  const flakyFailures = options.flakyFailures ?? 2;
  const calendarMonths = options.calendarMonths ?? 600;
  const validators = options.validators ?? true;
  const padTo = options.pageBytes ?? 0;
  const counters = new Map<string, number>();
  /** Revision and Last-Modified (epoch seconds) of each content page changed since the start; the rest are revision 1. */
  const revisions = new Map<number, { revision: number; modifiedAt: number }>();
  const FIRST_MODIFIED = Date.UTC(2026, 0, 1) / 1000;
  const revisionOf = (i: number) => revisions.get(i) ?? { revision: 1, modifiedAt: FIRST_MODIFIED };
  const timers = new Set<NodeJS.Timeout>();
  let huge: Buffer | null = null;
  let port = 0;
  let latencyMs = 0;

  const pathOf = (i: number) => (i === 0 ? '/' : i % 5 === 4 ? `/q?id=${i}&kind=page` : `/p/${i}`);
  const disguise = (i: number) => {
    if (i % 5 === 4) return `/q?kind=page&id=${i}`;
    return i % 2 === 0 ? `${pathOf(i)}#section-2` : `${pathOf(i)}?utm_source=test&utm_medium=link`;
  };
  const children = (i: number) => Array.from({ length: k }, (_, c) => i * k + 1 + c).filter((c) => c < pages);
  const depthOf = (i: number) => {
    let d = 0;
    for (let x = i; x > 0; x = Math.floor((x - 1) / k)) d++;
    return d;
  };
  const indexOfPath = (url: URL): number | null => {
    if (url.pathname === '/') return 0;
    const p = /^\/p\/(\d+)$/.exec(url.pathname);
    const n = p ? Number(p[1]) : url.pathname === '/q' ? Number(url.searchParams.get('id')) : NaN;
    return Number.isInteger(n) && n > 0 && n < pages && pathOf(n).split('?')[0] === url.pathname ? n : null;
  };

  const contentPage = (i: number): string => {
    const links = [...children(i).flatMap((c) => [pathOf(c), disguise(c)])];
    if (i > 0) links.push(pathOf(Math.floor((i - 1) / k)), '/');
    if (i === 0 && traps) {
      links.push(...Object.values(TRAP_PATHS), `http://localhost:${port}/offhost`);
      links.push('mailto:jobs@example.com', 'javascript:void(0)', 'tel:+3312345678');
    }
    const items = Array.from(
      { length: itemsPerPage },
      (_, n) => `<article class="item"><h2>Item ${n + 1} of page ${i}</h2><a class="more" href="${pathOf(i).replace(/&/g, '&amp;')}#item-${n + 1}">more</a></article>`,
    ).join('\n');
    const anchors = links.map((l) => `<li><a href="${l.replace(/&/g, '&amp;')}">${l.replace(/&/g, '&amp;')}</a></li>`).join('\n');
    const { revision } = revisionOf(i);
    const edited = revision > 1 ? `<p class="revision">revision ${revision}</p>` : '';
    const page = `<!doctype html><html><head><meta charset="utf-8"><title>Page ${i}</title></head><body><h1>Page ${i}</h1>${edited}${items}<ul>${anchors}</ul>`;
    const room = padTo - page.length - 15;
    const filler = room > 0 ? `<p>${FILLER.repeat(Math.ceil(room / FILLER.length)).slice(0, room)}</p>` : '';
    return `${page}${filler}</body></html>`;
  };

  /** The page's validators as headers: which ones depend on i (see TestSiteOptions.validators). */
  const validatorHeaders = (i: number): Record<string, string> => {
    if (!validators) return {};
    const { revision, modifiedAt } = revisionOf(i);
    const h: Record<string, string> = {};
    if (i % 3 !== 2) h.etag = `"p${i}-r${revision}"`;
    if (i % 3 !== 1) h['last-modified'] = new Date(modifiedAt * 1000).toUTCString();
    return h;
  };

  /** RFC 9110 §13.2.2: If-None-Match decides when sent (weak comparison); else If-Modified-Since, against Last-Modified. */
  const notModified = (req: IncomingMessage, h: Record<string, string>): boolean => {
    const inm = req.headers['if-none-match'];
    if (inm !== undefined) {
      if (!h.etag) return false;
      const weak = (t: string) => t.trim().replace(/^W\//, '');
      return inm.trim() === '*' || inm.split(',').some((t) => weak(t) === weak(h.etag!));
    }
    const ims = req.headers['if-modified-since'];
    if (ims === undefined || !h['last-modified']) return false;
    const since = Date.parse(ims);
    return !Number.isNaN(since) && Date.parse(h['last-modified']) <= since;
  };

  const server = await serve((req, res, url) => {
    const path = url.pathname;
    if ((req.headers.host ?? '').startsWith('localhost')) return html(res, 200, '<p>off-host page: a crawler following the off-host link lands here</p>');
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
      return;
    }
    const i = indexOfPath(url);
    if (i !== null) {
      const h = validatorHeaders(i);
      const answer = () => (notModified(req, h) ? void res.writeHead(304, h).end() : html(res, 200, contentPage(i), h));
      return latencyMs > 0 ? later(res, latencyMs, answer) : answer();
    }
    if (!traps) return html(res, 404, '<p>not found</p>');
    return trapRoute(path, res);
  });
  port = server.port;

  /** Answers with `answer` after `ms`, unless the client has gone by then. */
  const later = (res: ServerResponse, ms: number, answer: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!res.destroyed) answer();
    }, ms);
    timers.add(t);
    res.on('close', () => {
      clearTimeout(t);
      timers.delete(t);
    });
  };

  const trapRoute = (path: string, res: ServerResponse): void => {
    const redirect = (status: number, location: string): void => void res.writeHead(status, { location, 'content-length': '0' }).end();
    switch (path) {
      case '/trap/redirect-chain':
        return redirect(301, '/trap/redirect-chain/2');
      case '/trap/redirect-chain/2':
        return redirect(302, '/trap/redirect-chain/3');
      case '/trap/redirect-chain/3':
        return redirect(307, '/trap/landing');
      case '/trap/landing':
        return html(res, 200, '<p>end of the redirect chain</p>');
      case '/trap/redirect-loop':
        return redirect(302, '/trap/redirect-loop/b');
      case '/trap/redirect-loop/b':
        return redirect(302, '/trap/redirect-loop');
      case '/trap/flaky': {
        const n = (counters.get(path) ?? 0) + 1;
        counters.set(path, n);
        return n <= flakyFailures ? html(res, 500, '<p>try again</p>') : html(res, 200, '<p>flaky page, finally</p>');
      }
      case '/trap/always-503':
        return html(res, 503, '<p>down for maintenance</p>', { 'retry-after': '1' });
      case '/trap/slow':
        return later(res, slowMs, () => html(res, 200, '<p>slow page</p>'));
      case '/trap/doc.pdf': {
        const pdf = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
        res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(pdf.length) }).end(pdf);
        return;
      }
      case '/trap/huge':
        huge ??= Buffer.alloc(20 * 1024 * 1024, '<p>x</p>');
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(huge.length) }).end(huge);
        return;
      case '/private/secret':
        return html(res, 200, '<p>robots.txt disallows this page</p>');
    }
    const month = /^\/calendar\/(\d{4})\/(\d{2})$/.exec(path);
    if (month) {
      const index = (Number(month[1]) - 2026) * 12 + Number(month[2]) - 1;
      if (index < 0 || index >= calendarMonths) return html(res, 404, '<p>no such month</p>');
      return html(res, 200, `<h1>${month[1]}-${month[2]}</h1><a class="next" href="${calendarPath(index + 1)}">next month</a>`);
    }
    html(res, 404, '<p>not found</p>');
  };

  const abs = (p: string) => `${server.origin}${p}`;
  const trapUrls = Object.fromEntries(Object.entries(TRAP_PATHS).map(([name, p]) => [name, abs(p)])) as Record<TrapName, string>;
  trapUrls.offHost = `http://localhost:${port}/offhost`;

  return {
    origin: server.origin,
    port,
    accessLog: server.accessLog,
    home: abs('/'),
    traps: trapUrls,
    spec: {
      item_root: 'article.item',
      item_fields: [
        { name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] },
        { name: 'link', selector: 'a.more', attribute: 'href', xpath: null, transforms: [] },
      ],
    },
    expected(maxDepth: number): ExpectedCrawl {
      const content: string[] = [];
      for (let i = 0; i < pages; i++) if (depthOf(i) <= maxDepth) content.push(abs(pathOf(i)));
      const fetched = [...content];
      const failed: string[] = [];
      const neverServed: string[] = [];
      const notRequested: string[] = [];
      const parsed = [...content];
      if (traps) {
        neverServed.push(trapUrls.robotsDisallowed, trapUrls.offHost);
        notRequested.push(trapUrls.offHost);
        if (maxDepth >= 1) {
          fetched.push(trapUrls.redirectChain, trapUrls.flaky, trapUrls.pdf);
          parsed.push(trapUrls.redirectChain, trapUrls.flaky);
          failed.push(trapUrls.redirectLoop, trapUrls.always503, trapUrls.slow, trapUrls.huge, trapUrls.robotsDisallowed);
          // the calendar starts at depth 1 and each next month is one hop deeper
          for (let m = 0; m + 1 <= maxDepth && m < calendarMonths; m++) {
            fetched.push(abs(calendarPath(m)));
            parsed.push(abs(calendarPath(m)));
          }
        }
      }
      const items = content.length * itemsPerPage;
      return { requested: [...fetched, ...failed].sort(), fetched: fetched.sort(), failed: failed.sort(), neverServed, notRequested, parsed: parsed.sort(), items };
    },
    urlOf: (i: number) => abs(pathOf(i)),
    change(changed: readonly number[]) {
      for (const i of changed) {
        if (!Number.isInteger(i) || i < 0 || i >= pages) throw new RangeError(`no content page ${i}`);
        const before = revisionOf(i);
        revisions.set(i, { revision: before.revision + 1, modifiedAt: Math.max(before.modifiedAt + 1, Math.floor(Date.now() / 1000)) });
      }
      return changed.map((i) => abs(pathOf(i)));
    },
    bytesSent: () => server.bytesSent(),
    reset() {
      counters.clear();
      server.accessLog.clear();
    },
    setLatency(ms: number) {
      latencyMs = ms;
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      await server.close();
    },
  };
}

const FILLER = 'Every page of the test site carries some ordinary prose, so that its size is that of a real page. ';

function calendarPath(index: number): string {
  const year = 2026 + Math.floor(index / 12);
  const month = (index % 12) + 1;
  return `/calendar/${year}/${String(month).padStart(2, '0')}`;
}
