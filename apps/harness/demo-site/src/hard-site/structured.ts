/**
 * Structured data and near-duplicates as sites publish them: three articles, each with a title,
 * a description, OpenGraph and Twitter card properties, a JSON-LD `NewsArticle` (and one block that
 * is not JSON), and microdata (`itemscope` Article with a nested Person); and each reachable as
 * itself, as a print view (`?print=1`: no header, navigation or footer) and as a session-id mirror
 * (`?sid=…`: the same page, its navigation links carrying the session). Only the mirrors link to the
 * archive page, so a crawl that finds the archive followed a near-duplicate's links.
 *
 * Items: `div.item` with the title in `.title`, one per article page (any variant).
 * {@link expectedStructured} says what a crawl from the entry at depth ≥ 3 gives.
 */
import { escapeHtml, html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';

interface Article {
  readonly title: string;
  readonly author: string;
  readonly published: string;
  readonly body: readonly string[];
}

/** Texts far apart on purpose: their similarity hashes differ in many bits. */
export const STRUCTURED_ARTICLES: readonly Article[] = [
  {
    title: 'The harbour wall is rebuilt',
    author: 'Ada Byron',
    published: '2026-11-02',
    body: [
      'After the November storm tore a forty metre breach in the old harbour wall, the council voted to rebuild it in granite rather than concrete.',
      'Fishermen moved their boats to the northern basin while divers surveyed the foundations, which date from the eighteenth century.',
      'The works should end before the spring herring season, weather permitting, and the quay reopens to walkers in March.',
    ],
  },
  {
    title: 'A recipe for rye sourdough',
    author: 'Grace Hopper',
    published: '2026-11-09',
    body: [
      'Feed the starter twice a day for a week with equal weights of dark rye flour and lukewarm water until it smells sweet and sour.',
      'Mix three hundred grams of it with caraway, salt, molasses and more flour into a sticky dough, then let it rise in a tin overnight.',
      'Bake at two hundred and thirty degrees with steam for the first quarter hour and wait a full day before slicing the loaf.',
    ],
  },
  {
    title: 'Comet seen from the observatory',
    author: 'Edwin Hubble',
    published: '2026-11-16',
    body: [
      'Astronomers on the hill photographed a faint green comet low in the eastern sky just before dawn on Tuesday.',
      'Its tail stretched two degrees across Orion, and spectra showed diatomic carbon glowing as the nucleus warmed near perihelion.',
      'Amateur telescopes can follow it through December, when it fades below naked-eye brightness and heads back toward the outer planets.',
    ],
  },
];

export const STRUCTURED_ENTRY = '/structured/';

function articlePage(origin: string, n: number, url: URL): string {
  const a = STRUCTURED_ARTICLES[n - 1]!;
  const print = url.searchParams.get('print') === '1';
  const sid = url.searchParams.get('sid');
  const own = `${origin}/structured/article/${n}`;
  const head = [
    `<title>${escapeHtml(a.title)}</title>`,
    `<meta name="description" content="${escapeHtml(a.body[0]!)}">`,
    // Only the page itself names its canonical URL: the variants name none, as print views and
    // session-id copies often do — what near-duplicate marking is for (rel=canonical would catch them otherwise).
    print || sid ? '' : `<link rel="canonical" href="${own}">`,
    `<meta property="og:title" content="${escapeHtml(a.title)}">`,
    `<meta property="og:type" content="article">`,
    `<meta property="og:url" content="${own}">`,
    `<meta property="og:image" content="${origin}/structured/img/${n}.jpg">`,
    `<meta property="article:published_time" content="${a.published}">`,
    `<meta name="twitter:card" content="summary">`,
    `<meta name="twitter:title" content="${escapeHtml(a.title)}">`,
    `<script type="application/ld+json">${JSON.stringify({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: a.title, datePublished: a.published, author: { '@type': 'Person', name: a.author } })}</script>`,
    '<script type="application/ld+json">{ "@type": "NotJson", </script>',
  ].join('');
  const withSid = (path: string) => (sid ? `${path}?sid=${encodeURIComponent(sid)}` : path);
  const chrome = print
    ? { header: '', nav: '', footer: '' }
    : {
        header: '<header><a href="/structured/">The Gazette</a></header>',
        // The mirror's navigation carries the session, and links to the archive (found through mirrors only).
        nav: `<nav><a href="${withSid('/structured/')}">Home</a>${sid ? ' <a href="/structured/archive">Archive</a>' : ''}</nav>`,
        footer: '<footer>© The Gazette</footer>',
      };
  const main = `<main><article itemscope itemtype="https://schema.org/Article"><div class="item"><h1 class="title" itemprop="headline">${escapeHtml(a.title)}</h1></div>
    <p>By <span itemprop="author" itemscope itemtype="https://schema.org/Person"><span itemprop="name">${escapeHtml(a.author)}</span></span>,
    <time itemprop="datePublished" datetime="${a.published}">${a.published}</time></p>
    ${a.body.map((p) => `<p itemprop="articleBody">${escapeHtml(p)}</p>`).join('')}</article></main>`;
  // The plain page links to its print view and its mirror (a hop further): they come after it.
  const variants = print || sid ? '' : `<aside><a href="/structured/article/${n}?print=1">Print</a> <a href="/structured/article/${n}?sid=s${n}x">Share</a></aside>`;
  return `<!doctype html><html lang="en"><head>${head}</head><body>${chrome.header}${chrome.nav}${main}${variants}${chrome.footer}</body></html>`;
}

export const structured: HardSiteFeature = {
  prefix: '/structured/',
  entry: STRUCTURED_ENTRY,
  handle(_req, res, url, ctx) {
    if (url.pathname === '/structured/') {
      const list = STRUCTURED_ARTICLES.map((a, i) => `<li><a href="/structured/article/${i + 1}">${escapeHtml(a.title)}</a></li>`).join('');
      html(res, 200, `<!doctype html><html lang="en"><head><title>The Gazette</title></head><body><main><h1>Latest stories from the Gazette</h1><ul>${list}</ul></main></body></html>`);
      return;
    }
    if (url.pathname === '/structured/archive') {
      html(res, 200, '<!doctype html><html lang="en"><head><title>Archive</title></head><body><main><h1>Archive</h1><p>Older issues are kept in the town library reading room, bound by year.</p></main></body></html>');
      return;
    }
    const n = Number(/^\/structured\/article\/([1-3])$/.exec(url.pathname)?.[1]);
    if (!n) {
      html(res, 404, '<!doctype html><title>Not found</title>');
      return;
    }
    html(res, 200, articlePage(ctx.origin, n, url));
  },
};

export interface ExpectedStructured {
  /** Paths (with query) fetched, sorted. */
  readonly paths: string[];
  /** Paths of pages of their own (not near-duplicates), sorted. */
  readonly originals: string[];
  readonly nearDuplicates: number;
  /** Item titles, sorted: each article once. */
  readonly titles: string[];
}

/** What a crawl from the entry at depth ≥ 3 with near-duplicate marking gives (items `div.item` / `.title`). */
export function expectedStructured(): ExpectedStructured {
  const articles = [1, 2, 3].map((n) => `/structured/article/${n}`);
  const variants = [1, 2, 3].flatMap((n) => [`/structured/article/${n}?print=1`, `/structured/article/${n}?sid=s${n}x`]);
  // A mirror's home link (`/structured/?sid=…`) is the entry again: a near-duplicate too.
  const homes = [1, 2, 3].map((n) => `/structured/?sid=s${n}x`);
  const originals = ['/structured/', '/structured/archive', ...articles].sort();
  const paths = [...originals, ...variants, ...homes].sort();
  return { paths, originals, nearDuplicates: variants.length + homes.length, titles: STRUCTURED_ARTICLES.map((a) => a.title).sort() };
}
