/**
 * The formats a crawl can keep of its pages. `html` is the body as fetched (after rendering for a
 * browser crawl); `text` and `markdown` are derived from it (derive-formats.ts).
 */
export const CONTENT_FORMATS = ['html', 'text', 'markdown'] as const;
export type ContentFormat = (typeof CONTENT_FORMATS)[number];

export function isContentFormat(value: string): value is ContentFormat {
  return (CONTENT_FORMATS as readonly string[]).includes(value);
}

/** The media type an object of a format is stored and served with. */
export const FORMAT_MEDIA_TYPES: Readonly<Record<ContentFormat, string>> = {
  html: 'text/html; charset=utf-8',
  text: 'text/plain; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
};
