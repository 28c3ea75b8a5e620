/**
 * The scrape view's logic without a DOM: the `POST /scrape` body a form gives, and what is shown of
 * the answer — one section per format asked for, in a fixed order, each as a string or a list of
 * strings that the view puts in as text nodes (dom.ts). Nothing here is HTML: a page's `html` is
 * its source shown as characters, its `metadata` JSON text, its links strings (not anchors, whose
 * `href` the page chose).
 */
import type { components, paths } from '@trawl/client';

export type ScrapeRequest = paths['/scrape']['post']['requestBody']['content']['application/json'];
export type ScrapeResult = components['schemas']['ScrapeResult'];
export type ScrapePending = components['schemas']['ScrapePending'];

/** The formats the form offers, in the order the answer is shown; `pdf` and `screenshot` render the page in Chromium. */
export const SCRAPE_FORMATS = ['markdown', 'html', 'text', 'links', 'metadata', 'screenshot', 'pdf'] as const;
export type ScrapeFormat = (typeof SCRAPE_FORMATS)[number];
export const DEFAULT_FORMATS: readonly ScrapeFormat[] = ['markdown', 'links', 'metadata'];
const FILE_FORMATS = new Set<string>(['screenshot', 'pdf']);

export class ScrapeFormError extends Error {}

export interface ScrapeForm {
  readonly url: string;
  readonly formats: readonly string[];
  /** A website id whose selectors give items; empty for none. */
  readonly spider: string;
  /** Seconds the answer may wait for the page; empty for the server's default. */
  readonly timeoutSeconds: string;
}

/** The request body; a ScrapeFormError for what the form can tell is wrong before asking (the API checks the rest). */
export function scrapeBody(form: ScrapeForm): ScrapeRequest {
  const url = form.url.trim();
  if (!/^https?:\/\/\S+$/i.test(url)) throw new ScrapeFormError('The URL must be an absolute http(s) URL.');
  const formats = SCRAPE_FORMATS.filter((f) => form.formats.includes(f));
  const body: ScrapeRequest = { url, formats: formats.length > 0 ? formats : ['markdown'] };
  if (form.spider) body.spider = form.spider;
  const timeout = form.timeoutSeconds.trim();
  if (timeout) {
    const seconds = Number(timeout);
    if (!Number.isFinite(seconds) || seconds <= 0) throw new ScrapeFormError('The wait must be a number of seconds above 0.');
    body.timeout_ms = Math.round(seconds * 1000);
  }
  return body;
}

/** An answer of `POST /scrape` or `GET /scrape/{id}` that holds no result yet (`202`). */
export function isPending(answer: ScrapeResult | ScrapePending): answer is ScrapePending {
  return 'result_url' in answer && (answer as ScrapePending).status === 'pending';
}

/** One format of the answer as shown: text (in a `<pre>`), a list of lines, the path of a stored file, or why it is missing. */
export type ScrapeSection =
  | { readonly format: string; readonly kind: 'text'; readonly text: string }
  | { readonly format: string; readonly kind: 'list'; readonly lines: readonly string[] }
  | { readonly format: string; readonly kind: 'file'; readonly path: string }
  | { readonly format: string; readonly kind: 'missing'; readonly text: string };

/** The sections of an answer: the formats asked for, in SCRAPE_FORMATS order, then `metadata` (always answered). */
export function scrapeSections(result: ScrapeResult, asked: readonly string[]): ScrapeSection[] {
  const formats: Record<string, unknown> = result.formats ?? {};
  const wanted = SCRAPE_FORMATS.filter((f) => f !== 'metadata' && asked.includes(f));
  const out: ScrapeSection[] = wanted.map((format): ScrapeSection => {
    const value = formats[format];
    if (format === 'links') {
      return Array.isArray(value)
        ? { format, kind: 'list', lines: value.map(String) }
        : { format, kind: 'missing', text: 'The links are not in this answer (it came from the job\'s record): the job\'s page lists them.' };
    }
    if (typeof value !== 'string') return { format, kind: 'missing', text: result.ok ? `No ${format}: the page is not HTML, or this format was not made of it.` : `No ${format}: the page failed.` };
    return FILE_FORMATS.has(format) ? { format, kind: 'file', path: value } : { format, kind: 'text', text: value };
  });
  if (result.metadata) out.push({ format: 'metadata', kind: 'text', text: JSON.stringify(result.metadata, null, 2) });
  return out;
}

/** The columns of an items table: the union of the items' field names, sorted. */
export function itemColumns(items: readonly { readonly fields: Readonly<Record<string, unknown>> }[]): string[] {
  return [...new Set(items.flatMap((i) => Object.keys(i.fields)))].sort();
}

/** A field value as a table cell shows it: text as is, anything else as JSON. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}
