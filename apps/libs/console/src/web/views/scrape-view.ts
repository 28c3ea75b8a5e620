/**
 * Scrape one URL: `POST /scrape` with the signed-in key, the formats ticked and optionally a
 * spider (whose selectors give items), and the answer's formats shown a tab each — Markdown, HTML,
 * text, links, metadata, the stored screenshot or PDF as a download — with the items of the
 * scrape's job. An answer that waits past its timeout (`202`) is asked again at `GET /scrape/{id}`
 * until the page's outcome is known or the view is left.
 *
 * A scraped page is anyone's: everything of it goes in as text nodes (dom.ts, model/scrape-result.ts),
 * so its HTML is its source on the screen, a `<script>` or an `onerror=` characters, its links
 * strings rather than anchors; and the page's CSP refuses inline scripts besides.
 */
import { client, download, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import type { Cleanup } from '../router.ts';
import { actionButton, empty, errorText, notice, pageHeader, table } from '../ui.ts';
import {
  cellText, DEFAULT_FORMATS, isPending, itemColumns, SCRAPE_FORMATS, scrapeBody, scrapeSections, ScrapeFormError,
  type ScrapePending, type ScrapeResult, type ScrapeSection,
} from '../model/scrape-result.ts';

const POLL_MS = 1000;
/** Items are projected a moment after the page's outcome: asked again this often before saying there are none. */
const ITEM_ATTEMPTS = 10;

function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hint ? h('p', { class: 'hint small' }, hint) : null);
}

export async function scrapeView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): Promise<Cleanup> {
  let alive = true;
  let run = 0;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  const url = h('input', { id: 'scrape-url', type: 'url', required: true, placeholder: 'https://example.com/', value: query.get('url') ?? '' });
  const checks = SCRAPE_FORMATS.map((fmt) => h('input', { id: `scrape-format-${fmt}`, type: 'checkbox', value: fmt, checked: DEFAULT_FORMATS.includes(fmt) }));
  const spider = h('select', { id: 'scrape-spider' }, h('option', { value: '' }, 'none: no items'));
  const timeout = h('input', { id: 'scrape-timeout', type: 'number', min: 1, max: 120, placeholder: "the server's (30)" });
  const submit = h('button', { type: 'submit', class: 'button primary', id: 'scrape-submit' }, 'Scrape');
  const message = h('div', { class: 'form-message', id: 'scrape-message' });
  const resultBox = h('section', { id: 'scrape-result', 'aria-live': 'polite' });

  const form = h(
    'form',
    { class: 'card form', id: 'scrape-form' },
    field('URL', url, 'One page, fetched now as a job of one page (counted in your quotas).'),
    h('fieldset', { class: 'formats', id: 'scrape-formats' }, h('legend', {}, 'Formats'), h('div', { class: 'row' }, ...checks.map((c) => h('label', { class: 'check' }, c, ` ${c.value}`)))),
    h('div', { class: 'row' }, field('Spider (website)', spider, 'Its selectors extract items and its request options apply.'), field('Wait at most (s)', timeout, 'Past it the job goes on and this page asks again.')),
    submit,
    message,
  );

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void scrape();
  });

  async function scrape(): Promise<void> {
    const mine = ++run;
    replace(message);
    let body;
    try {
      body = scrapeBody({ url: url.value, formats: checks.filter((c) => c.checked).map((c) => c.value), spider: spider.value, timeoutSeconds: timeout.value });
    } catch (err) {
      if (!(err instanceof ScrapeFormError)) throw err;
      replace(message, notice('error', err.message));
      return;
    }
    submit.disabled = true;
    replace(resultBox, notice('info', 'Scraping…'));
    delete resultBox.dataset.jobId;
    try {
      let answer: ScrapeResult | ScrapePending = await ok(client.POST('/scrape', { body }));
      while (isPending(answer)) {
        replace(resultBox, notice('info', `Still waiting for the page (job ${f.shortId(answer.job_id)})…`));
        await sleep(POLL_MS);
        if (!alive || mine !== run) return;
        answer = await ok(client.GET('/scrape/{id}', { params: { path: { id: answer.job_id } } }));
      }
      if (!alive || mine !== run) return;
      showResult(answer, body.formats ?? []);
    } catch (err) {
      if (alive && mine === run) replace(resultBox, notice('error', errorText(err)));
    } finally {
      if (mine === run) submit.disabled = false;
    }
  }

  function showResult(result: ScrapeResult, asked: readonly string[]): void {
    const sections = scrapeSections(result, asked);
    const withItems = (result.item_count ?? 0) > 0;
    const names = [...sections.map((s) => s.format), ...(withItems ? ['items'] : [])];
    const tabs = h('div', { class: 'tabs', role: 'tablist', id: 'scrape-tabs' });
    const pane = h('div', { id: 'scrape-pane' });
    const show = (name: string): void => {
      replace(tabs, ...names.map((n) => h('button', { type: 'button', role: 'tab', class: `tab${n === name ? ' on' : ''}`, 'data-scrape-format': n, onclick: () => show(n) }, n)));
      const section = sections.find((s) => s.format === name);
      if (section) replace(pane, sectionView(section, result));
      else void showItems(pane, result.job_id, result.item_count ?? 0);
    };
    const summary = h(
      'dl',
      { class: 'counters', id: 'scrape-summary' },
      h('div', {}, h('dt', {}, 'Status'), h('dd', {}, result.status ?? '—')),
      h('div', {}, h('dt', {}, 'Items'), h('dd', {}, f.count(result.item_count ?? 0))),
      h('div', {}, h('dt', {}, 'Job'), h('dd', {}, h('a', { href: `#/jobs/${encodeURIComponent(result.job_id)}`, class: 'mono', id: 'scrape-job' }, f.shortId(result.job_id)))),
    );
    replace(
      resultBox,
      h(
        'div',
        { class: 'card' },
        h('div', { class: 'url', id: 'scrape-final-url' }, result.final_url ?? result.url),
        summary,
        result.ok ? null : notice('error', `The page failed: ${result.error?.message ?? 'no reason given'}${result.error?.code ? ` (${result.error.code})` : ''}`),
        tabs,
        pane,
      ),
    );
    resultBox.dataset.jobId = result.job_id;
    resultBox.dataset.ok = String(result.ok);
    if (names.length > 0) show(names[0]!);
  }

  function sectionView(section: ScrapeSection, result: ScrapeResult): HTMLElement {
    const attrs = { id: 'scrape-body', 'data-shown': section.format };
    switch (section.kind) {
      case 'text':
        return h('pre', { ...attrs, class: 'content-text' }, section.text);
      case 'list':
        return section.lines.length === 0 ? h('div', attrs, empty('No links.')) : h('ol', { ...attrs, class: 'link-list' }, ...section.lines.map((l) => h('li', { class: 'mono' }, l)));
      case 'file': {
        const name = `${f.shortId(result.job_id)}.${section.format === 'pdf' ? 'pdf' : 'png'}`;
        return h('div', attrs, h('p', { class: 'mono' }, section.path), actionButton(`Download ${section.format}`, () => download(section.path, name), { id: 'scrape-download' }));
      }
      case 'missing':
        return h('div', attrs, empty(section.text));
    }
  }

  async function showItems(pane: HTMLElement, jobId: string, expected: number): Promise<void> {
    const box = h('div', { id: 'scrape-body', 'data-shown': 'items' }, 'Loading…');
    replace(pane, box);
    try {
      for (let attempt = 1; ; attempt++) {
        const { items } = await ok(client.GET('/jobs/{id}/items', { params: { path: { id: jobId }, query: { limit: 100 } } }));
        if (!alive || !box.isConnected) return;
        if (items.length >= Math.min(expected, 100) || attempt >= ITEM_ATTEMPTS) {
          const columns = itemColumns(items);
          replace(
            box,
            items.length === 0
              ? empty('No items recorded yet: the job page lists them once they are.')
              : table([...columns, 'errors'], items.map((i) => [...columns.map((c) => cellText(i.fields[c])), (i.errors ?? []).join('\n')]), { id: 'scrape-items' }),
          );
          box.dataset.loaded = 'items';
          return;
        }
        await sleep(500);
      }
    } catch (err) {
      if (box.isConnected) replace(box, notice('error', errorText(err)));
    }
  }

  try {
    const { websites } = await ok(client.GET('/websites'));
    for (const w of websites) spider.append(h('option', { value: w.id }, `${w.name} (${w.id})${w.shared ? ' · shared' : ''}`));
    if (query.get('spider')) spider.value = query.get('spider')!;
  } catch (err) {
    message.append(notice('warn', `Websites could not be listed: ${errorText(err)}`));
  }
  outlet.append(pageHeader('Scrape a page'), form, resultBox);
  return () => {
    alive = false;
  };
}
