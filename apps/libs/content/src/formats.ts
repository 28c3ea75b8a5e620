/**
 * The formats a crawl can keep of its pages. `html` is the body as fetched (after rendering for a
 * browser crawl); `text` and `markdown` are derived from it (derive-formats.ts); `screenshot` (PNG)
 * and `pdf` are made by the browser that rendered the page (binary, never derived here); `metadata`
 * is the page's structured data as JSON (title, description, OpenGraph, JSON-LD, microdata), read
 * by the worker's parse step (@trawl/crawl page-metadata.ts).
 */
export const CONTENT_FORMATS = ['html', 'text', 'markdown', 'screenshot', 'pdf', 'metadata'] as const;
export type ContentFormat = (typeof CONTENT_FORMATS)[number];

/** The formats that are text (UTF-8): what can be inlined in a JSON line. */
export const TEXT_FORMATS = ['html', 'text', 'markdown', 'metadata'] as const;
export type TextFormat = (typeof TEXT_FORMATS)[number];

/** The formats a browser render makes: a page fetched over HTTP has none. */
export const CAPTURED_FORMATS = ['screenshot', 'pdf'] as const;
export type CapturedFormat = (typeof CAPTURED_FORMATS)[number];

export function isTextFormat(value: string): value is TextFormat {
  return (TEXT_FORMATS as readonly string[]).includes(value);
}

export function isContentFormat(value: string): value is ContentFormat {
  return (CONTENT_FORMATS as readonly string[]).includes(value);
}

/** The media type an object of a format is stored and served with. */
export const FORMAT_MEDIA_TYPES: Readonly<Record<ContentFormat, string>> = {
  html: 'text/html; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
  screenshot: 'image/png',
  pdf: 'application/pdf',
  metadata: 'application/json; charset=utf-8',
};
