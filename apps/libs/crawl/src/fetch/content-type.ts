/** What a Content-Type means for the crawl: parse it as HTML, read it as a document (a PDF, when the job asks for its text), or record it and move on. */
export interface MediaType {
  /** Lower-case `type/subtype`, or null when the header is missing or garbage. */
  readonly essence: string | null;
  readonly charset: string | null;
}

const CHARSET_PARAM = /;\s*charset\s*=\s*"?([^";\s]+)/i;

export function parseContentType(header: string | null | undefined): MediaType {
  if (!header) return { essence: null, charset: null };
  const semi = header.indexOf(';');
  const essence = (semi === -1 ? header : header.slice(0, semi)).trim().toLowerCase();
  const charset = CHARSET_PARAM.exec(header)?.[1]?.toLowerCase() ?? null;
  return { essence: essence.includes('/') ? essence : null, charset };
}

export function isHtmlType(essence: string | null): boolean {
  return essence === 'text/html' || essence === 'application/xhtml+xml';
}

/** A document whose text the worker extracts (a PDF: derive-pdf.ts in @trawl/content) when the job asks for text or Markdown. */
export function isPdfType(essence: string | null): boolean {
  return essence === 'application/pdf';
}

const HTML_START = /^\s*(?:<!doctype\s+html|<html|<head|<body|<!--|<meta|<title|<div|<p[\s>])/i;

/** For a response without Content-Type: does the start of the body look like HTML (a tiny part of the WHATWG sniffing rules)? */
export function looksLikeHtml(start: string): boolean {
  return HTML_START.test(start.replace(/^\uFEFF/, ''));
}
