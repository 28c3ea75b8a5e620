/**
 * The limit's page work, as `limit-crawl.ts` runs it: htmlparser2 + cheerio, the items read with
 * `$(root).find(selector).first()` per field, every anchor normalised. Its own module so that
 * `bench:parse` times exactly what the limit does per page, beside Trawl's parsePage.
 */
import { load } from 'cheerio/slim';
import { parseDocument } from 'htmlparser2';
import { normaliseUrlOrNull } from '@trawl/crawl';
import type { CrawlerConfig } from './crawler-config.ts';

export interface LimitPage {
  /** Items with at least one field. */
  readonly items: Record<string, string>[];
  /** Every anchor's normalised URL (null when it is not a fetchable URL), in document order. */
  readonly links: (string | null)[];
}

export function limitParse(config: Pick<CrawlerConfig, 'itemRoot' | 'itemFields'>, url: string, html: string): LimitPage {
  const $ = load(parseDocument(html));
  const items: Record<string, string>[] = [];
  for (const el of $(config.itemRoot).toArray()) {
    const root = $(el);
    const fields: Record<string, string> = {};
    for (const f of config.itemFields) {
      const node = root.find(f.selector).first();
      const value = f.attribute ? node.attr(f.attribute) : node.text().trim();
      if (value !== undefined) fields[f.name] = value;
    }
    if (Object.keys(fields).length > 0) items.push(fields);
  }
  const links = $('a[href]')
    .toArray()
    .map((a) => normaliseUrlOrNull(a.attribs.href ?? '', url));
  return { items, links };
}
