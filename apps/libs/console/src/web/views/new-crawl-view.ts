/**
 * Start a crawl: now (deduplicated by the API within its TTL unless "fresh" is ticked), at a time,
 * or on a schedule. A crawl started now opens its job page at once, with the depth and page
 * limits remembered for the progress estimate (the job's own dispatch event may come before the
 * page is listening).
 */
import type { paths } from '@trawl/client';
import { client, ok } from '../api.ts';
import { h } from '../dom.ts';
import { navigate } from '../router.ts';
import { errorText, notice, pageHeader } from '../ui.ts';

type CrawlRequest = paths['/crawl']['post']['requestBody']['content']['application/json'];

export function rememberLimits(jobId: string, limits: { maxDepth: number; maxPages?: number }): void {
  sessionStorage.setItem(`trawl.limits.${jobId}`, JSON.stringify(limits));
}

export function recalledLimits(jobId: string): { maxDepth?: number; maxPages?: number } {
  try {
    return JSON.parse(sessionStorage.getItem(`trawl.limits.${jobId}`) ?? '{}') as { maxDepth?: number; maxPages?: number };
  } catch {
    return {};
  }
}

function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hint ? h('p', { class: 'hint small' }, hint) : null);
}

export async function newCrawlView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): Promise<void> {
  const urls = h('textarea', { id: 'crawl-urls', rows: 3, required: true, placeholder: 'https://example.com/' }, query.get('url') ?? '');
  const spider = h('select', { id: 'crawl-spider' }, h('option', { value: '' }, 'none: follow links only, no items'));
  const depth = h('input', { id: 'crawl-depth', type: 'number', min: 0, max: 10, value: 1, required: true });
  const maxPages = h('input', { id: 'crawl-max-pages', type: 'number', min: 1, max: 100_000, placeholder: 'website default' });
  const when = h('select', { id: 'crawl-when' }, h('option', { value: 'now' }, 'now'), h('option', { value: 'at' }, 'at a time'), h('option', { value: 'every' }, 'repeatedly'));
  const at = h('input', { id: 'crawl-at', type: 'datetime-local', hidden: true });
  const every = h('input', { id: 'crawl-interval', type: 'text', placeholder: '1h, 30m, or a cron expression (UTC)', hidden: true });
  const fresh = h('input', { id: 'crawl-fresh', type: 'checkbox' });
  const keep = h('input', { id: 'crawl-keep', type: 'checkbox' });
  const params = h('textarea', { id: 'crawl-params', rows: 2, placeholder: 'key=value, one per line' });
  const message = h('div', { class: 'form-message', id: 'crawl-message' });

  when.addEventListener('change', () => {
    at.hidden = when.value !== 'at';
    every.hidden = when.value !== 'every';
  });

  try {
    const { websites } = await ok(client.GET('/websites'));
    for (const w of websites) spider.append(h('option', { value: w.id }, `${w.name} (${w.id})${w.shared ? ' · shared' : ''}`));
    if (query.get('spider')) spider.value = query.get('spider')!;
  } catch (err) {
    message.append(notice('warn', `Websites could not be listed: ${errorText(err)}`));
  }

  const form = h(
    'form',
    { class: 'card form', id: 'crawl-form' },
    field('Start URLs', urls, 'One absolute http(s) URL per line.'),
    h('div', { class: 'row' }, field('Spider (website)', spider, 'Its selectors extract items and steer pagination.'), field('Depth', depth, 'Link hops from a start URL (0–10).'), field('Max pages', maxPages)),
    h('div', { class: 'row' }, field('When', when), field('At', at), field('Every', every)),
    field('Parameters', params),
    h('label', { class: 'check' }, fresh, ' Fresh crawl: ignore an identical crawl made within the dedupe window'),
    h('label', { class: 'check' }, keep, ' Keep the pages for your next crawl: it then asks the site only whether they changed (a repeated crawl keeps them anyway)'),
    h('button', { type: 'submit', class: 'button primary', id: 'crawl-submit' }, 'Start crawl'),
    message,
  );

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.replaceChildren();
    const body: CrawlRequest = {
      start_urls: urls.value.split('\n').map((s) => s.trim()).filter(Boolean),
      depth: Number(depth.value),
    };
    if (spider.value) body.spider = spider.value;
    if (maxPages.value) body.max_pages = Number(maxPages.value);
    if (fresh.checked) body.ignore_cache = true;
    if (keep.checked) body.store_in_cache = true;
    if (when.value === 'at' && at.value) body.schedule_at = new Date(at.value).toISOString();
    if (when.value === 'every' && every.value) body.interval = every.value.trim();
    const kv = params.value.split('\n').map((l) => l.trim()).filter(Boolean);
    if (kv.length) body.params = Object.fromEntries(kv.map((l) => [l.split('=')[0]!.trim(), l.slice(l.indexOf('=') + 1).trim()]));
    try {
      const r = await ok(client.POST('/crawl', { body }));
      if (r.scheduled) {
        navigate('/schedules', { created: r.schedule_id });
      } else {
        rememberLimits(r.job_id, { maxDepth: Number(depth.value), ...(maxPages.value ? { maxPages: Number(maxPages.value) } : {}) });
        navigate(`/jobs/${r.job_id}`, r.cached ? { cached: 1 } : {});
      }
    } catch (err) {
      message.append(notice('error', errorText(err)));
    }
  });

  outlet.append(pageHeader('New crawl'), form);
}
