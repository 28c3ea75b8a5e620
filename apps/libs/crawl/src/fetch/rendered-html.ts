import type { Page } from 'puppeteer-core';

export interface RenderedHtml {
  /** The page's HTML (as `page.content()` serialises it), or its first `maxChars` characters when `over` and asked for; else ''. */
  readonly html: string;
  /** The serialised DOM is longer than `maxChars` characters. */
  readonly over: boolean;
}

/**
 * The rendered page's HTML, measured inside Chromium before any of it is sent: `page.content()`
 * ships the whole serialised DOM over DevTools into Node's heap (twice, as the message and as the
 * string), and a page script can grow its DOM to hundreds of megabytes. Serialised as
 * `page.content()` does (doctype, then the root element's outerHTML); a DOM over `maxChars`
 * characters sends nothing, or only its first `maxChars` characters when `keepPrefix`.
 *
 * A character is at least one UTF-8 byte, so a byte limit used as `maxChars` refuses nothing the
 * byte check would keep; what passes is checked in bytes by the caller.
 */
export async function renderedHtml(page: Page, maxChars: number, keepPrefix: boolean): Promise<RenderedHtml> {
  // A string, not a function: a bundler's helpers in a function's source would not exist in the page.
  return page.evaluate(`(() => {
    const d = document;
    let html = d.doctype ? new XMLSerializer().serializeToString(d.doctype) : '';
    if (d.documentElement) html += d.documentElement.outerHTML;
    const max = ${Math.floor(maxChars)};
    if (html.length <= max) return { html, over: false };
    return { html: ${keepPrefix ? 'html.slice(0, max)' : "''"}, over: true };
  })()`) as Promise<RenderedHtml>;
}
