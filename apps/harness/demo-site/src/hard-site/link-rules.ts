/**
 * Link rules as sites write them: `rel="nofollow"` links, a page whose robots meta tag says
 * `nofollow`, `rel=canonical` duplicates (a `?utm_source=` variant, a `?ref=` variant, one whose
 * canonical page is linked from nowhere else, one whose canonical is on another site), and links
 * to a subdomain and to another registrable domain — what `follow_nofollow`, `honour_canonical`
 * and `scope` are for.
 *
 * Three host names, all on this one server: `site.localhost` (the site), `blog.site.localhost`
 * (its subdomain: the same registrable domain) and `other.localhost` (another registrable domain).
 * Names under `.localhost` are loopback (RFC 6761): the crawler's resolver and Chromium resolve
 * them to 127.0.0.1 themselves, so a test opens `127.0.0.1:<port>` in TRAWL_FETCH_ALLOW and starts
 * from {@link linkRulesEntry}. The blog's and the other site's pages answer only on their own
 * name; the site's pages answer on any name but those two (so the home page's link works too).
 *
 * Items: `div.item` with the title in `.title`. {@link expectedLinkRules} says, for each
 * combination of the options, which pages a crawl from the entry at depth 2 fetches, which item
 * titles it gives and how many duplicates it counts.
 */
import type { IncomingMessage } from 'node:http';
import { escapeHtml, html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';

export const LINK_RULES_HOSTS = { site: 'site.localhost', blog: 'blog.site.localhost', other: 'other.localhost' } as const;
type HostLabel = keyof typeof LINK_RULES_HOSTS;

interface Page {
  readonly host: HostLabel;
  readonly title: string;
  /** Item titles shown on the page. */
  readonly items: readonly string[];
  /** `<head>` extras (canonical, robots meta), with `{port}` for the server's port. */
  readonly head?: string;
  /** `<body>` links, with `{port}`. */
  readonly links?: string;
}

const P = '{port}';
const PAGES: Readonly<Record<string, Page>> = {
  '/links/': {
    host: 'site',
    title: 'Link rules',
    items: [],
    links: [
      '<a href="/links/plain">a plain link</a>',
      '<a rel="nofollow" href="/links/nofollow">a nofollow link</a>',
      '<a href="/links/robots-nofollow">a page that asks robots not to follow its links</a>',
      '<a href="/links/item/1">item 1</a>',
      '<a href="/links/item/1?utm_source=newsletter">item 1 from the newsletter</a>',
      '<a href="/links/item/1?ref=home">item 1 from home</a>',
      '<a href="/links/item/2?ref=feed">item 2 from the feed</a>',
      '<a href="/links/syndicated">an article whose canonical is on another site</a>',
      `<a href="http://${LINK_RULES_HOSTS.blog}:${P}/links/blog">the blog</a>`,
      `<a href="http://${LINK_RULES_HOSTS.other}:${P}/links/other">another site</a>`,
    ].join(''),
  },
  '/links/plain': { host: 'site', title: 'Plain', items: [] },
  '/links/nofollow': { host: 'site', title: 'Nofollow target', items: ['Nofollow target'] },
  '/links/robots-nofollow': {
    host: 'site',
    title: 'Robots nofollow',
    items: ['Robots nofollow page'],
    head: '<meta name="robots" content="index, nofollow">',
    links: '<a href="/links/behind-robots">behind</a>',
  },
  '/links/behind-robots': { host: 'site', title: 'Behind robots', items: ['Behind a robots nofollow page'] },
  // Every variant names the bare URL as canonical, as a site does.
  '/links/item/1': { host: 'site', title: 'Item 1', items: ['Item 1'], head: '<link rel="canonical" href="/links/item/1">' },
  // Linked only as `?ref=feed`: honouring the canonical fetches this page in its stead.
  '/links/item/2': { host: 'site', title: 'Item 2', items: ['Item 2'], head: '<link rel="canonical" href="/links/item/2">' },
  '/links/syndicated': {
    host: 'site',
    title: 'Syndicated',
    items: ['Syndicated article'],
    head: `<link rel="canonical" href="http://${LINK_RULES_HOSTS.other}:${P}/links/original">`,
  },
  '/links/blog': { host: 'blog', title: 'Blog', items: ['Blog post'] },
  '/links/other': { host: 'other', title: 'Other site', items: ['Other site'] },
};

/** The start URL of a crawl of the feature on a hard site listening on `port`. */
export function linkRulesEntry(port: number): string {
  return `http://${LINK_RULES_HOSTS.site}:${port}/links/`;
}

export interface LinkRulesOptions {
  readonly scope: 'same_host' | 'same_domain' | 'any';
  readonly follow_nofollow: boolean;
  readonly honour_canonical: boolean;
}

export interface ExpectedLinkRules {
  /** Normalised URLs fetched, sorted (the crawl fetches each once; none fails). */
  readonly urls: string[];
  /** Item titles, sorted, one per item extracted (a title twice: extracted twice). */
  readonly titles: string[];
  /** Pages fetched as duplicates of their canonical page. */
  readonly duplicates: number;
}

/**
 * What a crawl from {@link linkRulesEntry} with depth ≥ 2 gives. The `?utm_source=` variant is the
 * bare URL once normalised (tracking parameters are dropped): it is never a page of its own. The
 * `?ref=` variants are pages of their own, and duplicates when the canonical is honoured: the
 * job then fetches item 2 (linked from nowhere else) in their stead and extracts each item once.
 * The syndicated article's canonical is on another host, so it is not honoured.
 */
export function expectedLinkRules(port: number, o: LinkRulesOptions): ExpectedLinkRules {
  const url = (host: HostLabel, path: string) => `http://${LINK_RULES_HOSTS[host]}:${port}${path}`;
  const fetched: [HostLabel, string][] = [
    ['site', '/links/'],
    ['site', '/links/plain'],
    ['site', '/links/robots-nofollow'],
    ['site', '/links/item/1'],
    ['site', '/links/item/1?ref=home'],
    ['site', '/links/item/2?ref=feed'],
    ['site', '/links/syndicated'],
  ];
  const titles = ['Robots nofollow page', 'Item 1', 'Syndicated article'];
  if (o.follow_nofollow) {
    fetched.push(['site', '/links/nofollow'], ['site', '/links/behind-robots']);
    titles.push('Nofollow target', 'Behind a robots nofollow page');
  }
  if (o.honour_canonical) {
    fetched.push(['site', '/links/item/2']);
    titles.push('Item 2');
  } else {
    titles.push('Item 1', 'Item 2');
  }
  if (o.scope !== 'same_host') {
    fetched.push(['blog', '/links/blog']);
    titles.push('Blog post');
  }
  if (o.scope === 'any') {
    fetched.push(['other', '/links/other']);
    titles.push('Other site');
  }
  return { urls: fetched.map(([h, p]) => url(h, p)).sort(), titles: titles.sort(), duplicates: o.honour_canonical ? 2 : 0 };
}

function hostLabelOf(req: IncomingMessage): HostLabel {
  const name = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
  if (name === LINK_RULES_HOSTS.blog) return 'blog';
  if (name === LINK_RULES_HOSTS.other) return 'other';
  return 'site';
}

export const linkRules: HardSiteFeature = {
  prefix: '/links/',
  entry: '/links/',
  handle(req, res, url) {
    const page = PAGES[url.pathname];
    if (!page || page.host !== hostLabelOf(req)) {
      html(res, 404, '<!doctype html><title>Not found</title>');
      return;
    }
    const port = (req.headers.host ?? '').match(/:(\d+)$/)?.[1] ?? '80';
    const fill = (s: string | undefined) => (s ?? '').replaceAll(P, port);
    const items = page.items.map((t) => `<div class="item"><h2 class="title">${escapeHtml(t)}</h2></div>`).join('');
    html(res, 200, `<!doctype html><html><head><title>${escapeHtml(page.title)}</title>${fill(page.head)}</head><body>${items}${fill(page.links)}</body></html>`);
  },
};
