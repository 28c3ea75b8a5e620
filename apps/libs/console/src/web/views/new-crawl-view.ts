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
import { crawlOptionsBody } from '../model/crawl-options.ts';

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
  // Reaching the site and link rules (the README's "Reaching sites"): folded away, optional.
  const headers = h('textarea', { id: 'crawl-headers', rows: 2, placeholder: 'X-Api-Key: k-123 (Name: value, one per line)' });
  const userAgent = h('input', { id: 'crawl-user-agent', type: 'text', maxLength: 512, placeholder: "the server's: Trawl/<version>" });
  const proxies = h('textarea', { id: 'crawl-proxies', rows: 2, placeholder: 'http://proxy.example:3128 or socks5://… (one per line)' });
  const loginUrl = h('input', { id: 'crawl-login-url', type: 'url', placeholder: 'https://shop.example/login' });
  const loginSecrets = h('textarea', { id: 'crawl-login-secrets', rows: 2, placeholder: 'password=shop-password (form field=your secret\'s name, one per line)' });
  const actions = h('textarea', { id: 'crawl-actions', rows: 3, placeholder: '[{"type": "click", "selector": "#accept-cookies"}, {"type": "scroll", "times": 3}]' });
  const include = h('textarea', { id: 'crawl-include', rows: 2, placeholder: '/products/ (one RE2 pattern per line)' });
  const exclude = h('textarea', { id: 'crawl-exclude', rows: 2, placeholder: '[?&]sort=' });
  const scope = h(
    'select',
    { id: 'crawl-scope' },
    h('option', { value: '' }, "the website's (same host)"),
    h('option', { value: 'same_host' }, 'same host'),
    h('option', { value: 'same_domain' }, 'same registrable domain'),
    h('option', { value: 'any' }, 'any host'),
  );
  const followNofollow = h('input', { id: 'crawl-follow-nofollow', type: 'checkbox' });

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
    h(
      'details',
      { class: 'options', id: 'crawl-reach' },
      h('summary', {}, 'Reaching the site: headers, user agent, proxy, login, actions'),
      h('div', { class: 'row' }, field('Headers', headers), field('User agent', userAgent)),
      field('Proxies', proxies, 'Credentials go in your secrets, not here.'),
      h('div', { class: 'row' }, field('Login page', loginUrl, 'A form login, run once per session.'), field('Login fields from secrets', loginSecrets, 'Each value is one of your secrets (POST /secrets), by name.')),
      field('Browser actions (JSON)', actions, 'Run in Chromium after each page loads: wait_for, click, scroll, type, press, wait, screenshot.'),
    ),
    h(
      'details',
      { class: 'options', id: 'crawl-links' },
      h('summary', {}, 'Links: patterns, scope, nofollow'),
      h('div', { class: 'row' }, field('Follow only links matching', include), field('Never follow links matching', exclude)),
      field('Scope', scope),
      h('label', { class: 'check' }, followNofollow, ' Follow rel=nofollow links too (and links of pages whose robots meta says nofollow)'),
    ),
    h('label', { class: 'check' }, fresh, ' Fresh crawl: ignore an identical crawl made within the dedupe window'),
    h('label', { class: 'check' }, keep, ' Keep the pages for your next crawl: it then asks the site only whether they changed (a repeated crawl keeps them anyway)'),
    h('button', { type: 'submit', class: 'button primary', id: 'crawl-submit' }, 'Start crawl'),
    message,
  );

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.replaceChildren();
    let options;
    try {
      options = crawlOptionsBody({
        headers: headers.value, userAgent: userAgent.value, proxies: proxies.value, loginUrl: loginUrl.value, loginSecrets: loginSecrets.value,
        actions: actions.value, include: include.value, exclude: exclude.value, scope: scope.value, followNofollow: followNofollow.checked,
      });
    } catch (err) {
      message.append(notice('error', (err as Error).message));
      return;
    }
    const body: CrawlRequest = {
      start_urls: urls.value.split('\n').map((s) => s.trim()).filter(Boolean),
      depth: Number(depth.value),
      ...options,
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
