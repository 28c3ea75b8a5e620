import type { CrawlSpec } from '@trawl/schemas';
import { listing, type Listing } from './listings.ts';
import { escapeHtml, html, type Handler } from './serve.ts';

export interface JobBoardOptions {
  /** Listings in total (ids 1..n). */
  readonly listings?: number;
  readonly perPage?: number;
}

export const ROBOTS_TXT = 'User-agent: *\nDisallow: /private/\n';

/**
 * The bundled demo site: a small job board the demo and the tests crawl.
 *
 * - `/` home, linking to the listings, the JavaScript section, an about page and a private page
 * - `/jobs?page=N` (also `q` and `location` filters): 10 listings a page, `a.next` to the next page
 * - `/jobs/:id` detail pages
 * - `/js/jobs`: listings inserted by an inline script only (needs the browser fetcher)
 * - `/robots.txt` disallowing `/private/`
 */
export function createJobBoard(options: JobBoardOptions = {}): Handler {
  const total = options.listings ?? 100;
  const perPage = options.perPage ?? 10;
  const all = Array.from({ length: total }, (_, i) => listing(i + 1));
  return (_req, res, url) => {
    const path = url.pathname;
    if (path === '/robots.txt') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(ROBOTS_TXT);
      return;
    }
    if (path === '/') return html(res, 200, page('Trawl demo jobs', HOME));
    if (path === '/about') return html(res, 200, page('About', '<p>A demo job board for Trawl. <a href="/">Home</a></p>'));
    if (path.startsWith('/private/')) return html(res, 200, page('Private', '<p>Crawlers that honour robots.txt never see this.</p>'));
    if (path === '/jobs') return html(res, 200, listingPage(all, url, perPage));
    const detail = /^\/jobs\/(\d+)$/.exec(path);
    if (detail) {
      const job = all[Number(detail[1]) - 1];
      return job ? html(res, 200, detailPage(job)) : html(res, 404, page('Not found', '<p>No such job.</p>'));
    }
    if (path === '/js/jobs') return html(res, 200, jsPage(all.slice(0, perPage)));
    html(res, 404, page('Not found', '<p>Nothing here.</p>'));
  };
}

/** The website configuration that crawls this board (for the seed script and tests). */
export const JOB_BOARD_SPEC: Pick<CrawlSpec, 'pagination_type' | 'next_link_selector' | 'page_param' | 'item_root' | 'item_fields' | 'include_patterns' | 'exclude_patterns'> = {
  pagination_type: 'next_link',
  next_link_selector: 'a.next',
  page_param: null,
  item_root: 'article.job',
  item_fields: [
    { name: 'title', selector: 'h2', attribute: null, xpath: null, transforms: [] },
    { name: 'link', selector: 'h2 a', attribute: 'href', xpath: null, transforms: [] },
    { name: 'company', selector: '.company', attribute: null, xpath: null, transforms: [] },
    { name: 'location', selector: '.location', attribute: null, xpath: null, transforms: [] },
    { name: 'salary', selector: '.salary', attribute: null, xpath: null, transforms: [] },
  ],
  include_patterns: ['/jobs'],
  exclude_patterns: [],
};

const HOME = `<h1>Demo jobs</h1>
<nav><a href="/jobs">All jobs</a> · <a href="/jobs?q=engineer">Engineering</a> · <a href="/js/jobs">Featured (JavaScript)</a> · <a href="/about">About</a> · <a href="/private/admin">Admin</a></nav>`;

function listingPage(all: readonly Listing[], url: URL, perPage: number): string {
  const q = (url.searchParams.get('q') ?? '').toLowerCase();
  const where = (url.searchParams.get('location') ?? '').toLowerCase();
  const matching = all.filter((l) => (!q || l.title.toLowerCase().includes(q)) && (!where || l.location.toLowerCase() === where));
  const n = Math.max(1, Number.parseInt(url.searchParams.get('page') ?? '1', 10) || 1);
  const items = matching.slice((n - 1) * perPage, n * perPage);
  const nextLink = n * perPage < matching.length ? `<a class="next" rel="next" href="${escapeHtml(pageHref(url, n + 1))}">Next page</a>` : '';
  const prevLink = n > 1 ? `<a class="prev" rel="prev" href="${escapeHtml(pageHref(url, n - 1))}">Previous</a> ` : '';
  const body = `<h1>Jobs${q ? ` matching “${escapeHtml(q)}”` : ''} — page ${n}</h1>
<section class="results">${items.map(card).join('\n')}</section>
<nav class="pagination">${prevLink}${nextLink}</nav>`;
  return page(`Jobs — page ${n}`, body);
}

/** Page 1 has one URL only (no `page=1`), so a crawler following "previous" finds nothing new. */
function pageHref(url: URL, n: number): string {
  const u = new URL(url);
  if (n <= 1) u.searchParams.delete('page');
  else u.searchParams.set('page', String(n));
  return u.pathname + u.search;
}

function card(l: Listing): string {
  return `<article class="job" data-id="${l.id}">
  <h2><a href="/jobs/${l.id}">${escapeHtml(l.title)}</a></h2>
  <p class="company">${escapeHtml(l.company)}</p> <p class="location">${escapeHtml(l.location)}</p> <p class="salary">${l.salary}</p>
  <p class="summary">${escapeHtml(l.summary)}</p><time datetime="${l.posted}">${l.posted}</time>
</article>`;
}

function detailPage(l: Listing): string {
  return page(
    l.title,
    `<article class="job-detail" data-id="${l.id}"><h1>${escapeHtml(l.title)}</h1>
<p class="company">${escapeHtml(l.company)}</p><p class="location">${escapeHtml(l.location)}</p><p class="salary">${l.salary}</p>
<div class="description"><p>${escapeHtml(l.summary)}</p><p>${escapeHtml(l.summary)}</p></div>
<a href="/jobs">Back to all jobs</a></article>`,
  );
}

function jsPage(featured: readonly Listing[]): string {
  const data = JSON.stringify(featured.map((l) => ({ id: l.id, title: l.title, company: l.company, location: l.location, salary: l.salary })));
  return page(
    'Featured jobs',
    `<h1>Featured jobs</h1><section id="featured" class="results"><noscript>Enable JavaScript to see the featured jobs.</noscript></section>
<script>
  // The listings exist only after this runs: a plain HTTP fetch sees an empty section.
  const jobs = ${data.replace(/</g, '\\u003c')};
  const root = document.getElementById('featured');
  for (const j of jobs) {
    const a = document.createElement('article');
    a.className = 'job';
    a.dataset.id = String(j.id);
    a.innerHTML = '<h2><a href="/jobs/' + j.id + '"></a></h2><p class="company"></p><p class="location"></p><p class="salary"></p>';
    a.querySelector('h2 a').textContent = j.title;
    a.querySelector('.company').textContent = j.company;
    a.querySelector('.location').textContent = j.location;
    a.querySelector('.salary').textContent = j.salary;
    root.appendChild(a);
  }
</script>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:50rem;margin:2rem auto;padding:0 1rem}article{border-bottom:1px solid #ddd;padding:.5rem 0}.salary{font-weight:bold}</style>
</head><body><header><a href="/">Demo jobs</a></header>
<main>${body}</main>
<footer><p>Trawl demo site. <a href="/about">About</a></p></footer></body></html>`;
}
