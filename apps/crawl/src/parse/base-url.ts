import type { CheerioAPI } from 'cheerio/slim';

/** The URL relative links resolve against: the first `<base href>` (itself resolved against the page) when it is http(s), else the page's final URL. */
export function baseUrlOf($: CheerioAPI, finalUrl: string): URL {
  const page = new URL(finalUrl);
  const href = $('base[href]').first().attr('href');
  if (!href) return page;
  try {
    const base = new URL(href.trim(), page);
    return base.protocol === 'http:' || base.protocol === 'https:' ? base : page;
  } catch {
    return page;
  }
}
