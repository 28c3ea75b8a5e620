/**
 * A scraped page's cheap metadata — title, description, language, canonical URL, OpenGraph and
 * Twitter card properties — read from the stored HTML's head in the API process.
 *
 * Why not cheerio here: the page is anyone's, and the API is shared by every tenant (DESIGN.md
 * invariant 9). This reads at most the first HEAD_BYTES characters with a few linear scans of
 * tags (no nested quantifiers, no backtracking over the page), so its cost is bounded whatever the
 * page holds. Full structured data (JSON-LD, microdata) belongs to the workers' parse step.
 */

/** The most of a page scanned for its head: metadata after that is not looked for. */
export const HEAD_BYTES = 64 * 1024;
/** The longest value kept of one property. */
const MAX_VALUE = 2_000;
/** The most OpenGraph/Twitter properties kept. */
const MAX_PROPERTIES = 50;

export interface PageMetadata {
  title: string | null;
  description: string | null;
  language: string | null;
  canonical: string | null;
  /** `og:*` and `twitter:*` properties by name (the first of each). */
  social: Record<string, string>;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ', '#39': "'" };

function decode(text: string): string {
  return text
    .replace(/&(#x[0-9a-f]{1,6}|#[0-9]{1,7}|[a-z0-9]{2,6});/gi, (whole, name: string) => {
      const lower = name.toLowerCase();
      if (ENTITIES[lower] !== undefined) return ENTITIES[lower];
      const code = lower.startsWith('#x') ? parseInt(lower.slice(2), 16) : lower.startsWith('#') ? parseInt(lower.slice(1), 10) : NaN;
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    })
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_VALUE);
}

/** The attributes of one tag's source (`<meta name="x" content="y">`), names lower-cased. */
function attributes(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of tag.matchAll(/([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/g)) {
    const name = m[1]!.toLowerCase();
    if (!(name in out)) out[name] = m[2] ?? m[3] ?? m[4] ?? '';
  }
  return out;
}

export function pageMetadata(html: string): PageMetadata {
  const head = html.slice(0, HEAD_BYTES);
  const meta: PageMetadata = { title: null, description: null, language: null, canonical: null, social: {} };
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(head);
  if (title) meta.title = decode(title[1]!) || null;
  const htmlTag = /<html\b[^>]*>/i.exec(head);
  if (htmlTag) meta.language = attributes(htmlTag[0]).lang?.trim().slice(0, 35) || null;
  for (const m of head.matchAll(/<(meta|link)\b[^>]*>/gi)) {
    const a = attributes(m[0]);
    if (m[1]!.toLowerCase() === 'link') {
      if (meta.canonical === null && a.rel?.toLowerCase().split(/\s+/).includes('canonical') && a.href) meta.canonical = decode(a.href);
      continue;
    }
    const name = (a.name ?? a.property ?? '').toLowerCase();
    if (a.content === undefined || name === '') continue;
    if (name === 'description' && meta.description === null) meta.description = decode(a.content) || null;
    else if ((name.startsWith('og:') || name.startsWith('twitter:')) && !(name in meta.social) && Object.keys(meta.social).length < MAX_PROPERTIES) meta.social[name] = decode(a.content);
  }
  return meta;
}
