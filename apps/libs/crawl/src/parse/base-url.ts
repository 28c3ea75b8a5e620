import type { Document } from 'domhandler';
import { attributeOf, selectFirstIn } from './select.ts';

/** The URL relative links resolve against: the first `<base href>` (itself resolved against the page) when it is http(s), else the page's final URL. */
export function baseUrlOf(doc: Document, finalUrl: string): URL {
  const page = new URL(finalUrl);
  const el = selectFirstIn(doc, 'base[href]');
  const href = el ? attributeOf(el, 'href') : undefined;
  if (!href) return page;
  try {
    const base = new URL(href.trim(), page);
    return base.protocol === 'http:' || base.protocol === 'https:' ? base : page;
  } catch {
    return page;
  }
}
