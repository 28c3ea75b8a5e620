/**
 * The benchmark site as pure functions of its options: which pages exist, where each lives, what
 * it links to and what HTML it is. The server process renders from here, and the bench checks its
 * contenders' page counts against `pageCount` — every figure is about the same, known site.
 *
 * Shape. Pages 0..N-1, page 0 is the home page. Page i links to K distinct content pages: first its
 * children in a K-ary tree (i·K+1 … i·K+K), which makes every page reachable from home, then
 * pseudo-random pages (a hash of i and the slot) up to K, plus "home" and "parent" in the chrome.
 * So most links point at pages already seen, as on a real site, and every crawler has to dedupe.
 *
 * Hosts. With H > 1 hosts, page i is served on host `127.0.0.(1 + i mod H)` (all of 127/8 is
 * loopback on Linux), so one crawl spans H hosts: what lets a host-keyed Kafka topic spread one
 * job's fetches over several partitions and workers.
 */

export interface SiteOptions {
  readonly pages: number;
  /** Content links per page (children first, then pseudo-random pages). */
  readonly links: number;
  /** Listings (`article.listing`, the items) per page. */
  readonly items: number;
  /** Hosts the pages are spread over (127.0.0.1 … 127.0.0.H). */
  readonly hosts: number;
  /** 'html': plain HTML. 'js': the listing and links are written by an inline script (browser only). */
  readonly render: 'html' | 'js';
}

export const DEFAULT_SITE: SiteOptions = { pages: 5_000, links: 10, items: 10, hosts: 1, render: 'html' };

/** The CSS selectors every contender extracts items with (Trawl's spec takes the same). */
export const ITEM_ROOT = 'article.listing';
export const ITEM_FIELDS = [
  { name: 'title', selector: 'h2', attribute: null },
  { name: 'company', selector: '.company', attribute: null },
  { name: 'location', selector: '.location', attribute: null },
  { name: 'salary', selector: '.salary', attribute: null },
  { name: 'link', selector: 'a.apply', attribute: 'href' },
] as const;

export function hostIndexOf(options: SiteOptions, page: number): number {
  return page % options.hosts;
}

export function hostName(hostIndex: number): string {
  return `127.0.0.${1 + hostIndex}`;
}

export function pathOf(page: number): string {
  return page === 0 ? '/' : `/p/${page}`;
}

/** The absolute URL of a page on its host. */
export function urlOf(options: SiteOptions, port: number, page: number): string {
  return `http://${hostName(hostIndexOf(options, page))}:${port}${pathOf(page)}`;
}

/** The page a request addresses, or null (wrong host, unknown path). */
export function pageOfRequest(options: SiteOptions, hostIndex: number, path: string): number | null {
  let page: number;
  if (path === '/') page = 0;
  else {
    const m = /^\/p\/(\d+)$/.exec(path);
    if (!m) return null;
    page = Number(m[1]);
  }
  if (!Number.isSafeInteger(page) || page >= options.pages) return null;
  return hostIndexOf(options, page) === hostIndex ? page : null;
}

/** A 32-bit integer hash (Murmur3's finaliser): deterministic "randomness" from an index. */
export function mix(x: number): number {
  let h = x | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The K distinct content pages page `i` links to: tree children first, then pseudo-random pages. */
export function linksOf(options: SiteOptions, i: number): number[] {
  const { pages, links: k } = options;
  const out: number[] = [];
  const taken = new Set<number>([i]);
  for (let c = i * k + 1; c <= i * k + k && c < pages; c++) {
    out.push(c);
    taken.add(c);
  }
  for (let slot = 0; out.length < Math.min(k, pages - 1) && slot < 4 * k; slot++) {
    const target = mix(i * 7_919 + slot * 104_729 + 1) % pages;
    if (taken.has(target)) continue;
    taken.add(target);
    out.push(target);
  }
  return out;
}

const ROLES = ['Rust engineer', 'Kafka operator', 'TypeScript developer', 'Site reliability engineer', 'Data engineer', 'Platform engineer', 'Backend developer', 'Search engineer'];
const LEVELS = ['Junior', 'Senior', 'Staff', 'Lead', 'Principal'];
const COMPANIES = ['Acme Streams', 'Northwind Data', 'Globex Logistics', 'Initech Cloud', 'Umbrella Analytics', 'Hooli Search'];
const CITIES = ['Berlin', 'Paris', 'Lisbon', 'Amsterdam', 'Remote', 'London', 'Madrid', 'Vienna'];
const WORDS = 'build operate scale observe stream index ship design review migrate automate secure partition replicate measure tune'.split(' ');

function pick<T>(list: readonly T[], seed: number): T {
  return list[mix(seed) % list.length]!;
}

function listingHtml(page: number, n: number): string {
  const id = page * 100 + n;
  const words = Array.from({ length: 18 }, (_, w) => pick(WORDS, id * 31 + w)).join(' ');
  return (
    `<article class="listing" data-id="${id}"><h2>${pick(LEVELS, id)} ${pick(ROLES, id + 1)}</h2>` +
    `<p class="meta"><span class="company">${pick(COMPANIES, id + 2)}</span> · <span class="location">${pick(CITIES, id + 3)}</span> · ` +
    `<span class="salary">€${50 + (mix(id) % 70)}k</span></p><p class="summary">We ${words}.</p>` +
    `<a class="apply" href="https://apply.bench.invalid/jobs/${id}" rel="nofollow">Apply</a></article>`
  );
}

/**
 * The HTML of page `i` (about 5 KB with the defaults: 10 listings, 10 links). Links to pages on
 * the same host are relative, to other hosts absolute, as a real site would write them. The
 * listings' "Apply" links point off-site (an ATS, as on real job boards): every contender drops
 * them by its host rule, which is the one link rule all three share.
 */
export function pageHtml(options: SiteOptions, port: number, i: number): string {
  const own = hostIndexOf(options, i);
  const href = (p: number) => (hostIndexOf(options, p) === own ? pathOf(p) : urlOf(options, port, p));
  const listings = Array.from({ length: options.items }, (_, n) => listingHtml(i, n)).join('\n');
  const related = linksOf(options, i)
    .map((p) => `<li><a href="${href(p)}">Openings, page ${p}</a></li>`)
    .join('');
  const parent = i === 0 ? 0 : Math.floor((i - 1) / options.links);
  const body =
    `<main><h1>Openings — page ${i}</h1><section class="listings">\n${listings}\n</section>` +
    `<nav class="pages"><ul>${related}</ul></nav></main>`;
  const content = options.render === 'js' ? `<div id="app"></div><script>document.getElementById('app').innerHTML = ${JSON.stringify(body).replace(/</g, '\\u003c')};</script>` : body;
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Openings — page ${i}</title>` +
    `<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="stylesheet" href="/static/site.css"></head>` +
    `<body><header><a class="brand" href="${href(0)}">Bench Jobs</a> <a href="${href(parent)}">Up</a></header>\n${content}\n` +
    `<footer><p>Synthetic benchmark site. Page ${i} of ${options.pages}.</p></footer></body></html>`
  );
}

export const ROBOTS_TXT = 'User-agent: *\nAllow: /\n';
