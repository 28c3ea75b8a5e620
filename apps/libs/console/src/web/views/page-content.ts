/**
 * A page's stored content in the job view: the Markdown (else the text, else the HTML) the job kept
 * of it, shown as text in a `<pre>` — the source as stored, never rendered. Crawled content is
 * anyone's: put in as a text node (dom.ts), a `<script>` or an `onerror=` in it is characters on
 * the screen, not markup (and the page's CSP refuses inline scripts besides).
 */
import { ApiRequestError, client, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import { errorText, notice } from '../ui.ts';

const PREFERRED = ['markdown', 'text', 'html'] as const;
type Format = (typeof PREFERRED)[number];

/**
 * Shows one fetch's content in `box`. `kept`: the formats the page lists, or null when not known
 * (a row of the changes), then the preferred ones are tried in order.
 */
export function showPageContent(box: HTMLElement, jobId: string, fetchId: string, url: string, kept: readonly string[] | null): void {
  const formats = kept === null ? [...PREFERRED] : PREFERRED.filter((f) => kept.includes(f));
  const body = h('pre', { class: 'content-text', id: 'page-content-body', 'aria-live': 'polite' }, 'Loading…');
  const message = h('div');
  const buttons = h('div', { class: 'content-formats' });
  const close = h('button', { type: 'button', class: 'button ghost', id: 'page-content-close', onclick: () => replace(box) }, 'Close');
  box.hidden = false;
  replace(box, h('div', { class: 'card content-card' }, h('header', { class: 'content-head' }, h('div', { class: 'url', id: 'page-content-url' }, url), buttons, close), body, message));

  async function load(format: Format, fallback: readonly Format[]): Promise<void> {
    replace(buttons, ...formats.map((f) => h('button', { type: 'button', class: `tab${f === format ? ' on' : ''}`, 'data-format': f, onclick: () => void load(f, []) }, f)));
    body.dataset.format = format;
    replace(body, 'Loading…');
    replace(message);
    try {
      const text = await ok(client.GET('/jobs/{id}/pages/{fetch_id}/content', { params: { path: { id: jobId, fetch_id: fetchId }, query: { format } }, headers: { accept: 'text/*' }, parseAs: 'text' }));
      replace(body, text);
      body.dataset.loaded = format;
    } catch (err) {
      const next = fallback[0];
      if (err instanceof ApiRequestError && err.code === 'CONTENT_NOT_FOUND' && next) return load(next, fallback.slice(1));
      replace(body);
      replace(message, notice(err instanceof ApiRequestError && err.code === 'CONTENT_NOT_FOUND' ? 'info' : 'error', errorText(err)));
    }
  }

  if (formats.length === 0) replace(body, 'The job kept no content of this page (it asked for no `formats`, or the page is not HTML).');
  else void load(formats[0]!, formats.slice(1));
}
