/**
 * The caller's jobs, newest first: status, progress, counters, filters by status and age.
 * Refreshed when the live feed reports a job starting or ending, and every few seconds while a
 * job is running (counters move with every page, which the feed is not asked for here).
 */
import { client, given, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import { FeedSocket } from '../live/feed-socket.ts';
import { navigate, replaceQuery, type Cleanup } from '../router.ts';
import type { Job } from '@trawl/client';
import { empty, errorText, notice, pageHeader, progressBar, statusBadge } from '../ui.ts';

const STATUSES = ['running', 'pending', 'finished', 'failed', 'cancelled'] as const;
const AGES: readonly [string, string, number | null][] = [
  ['1h', 'last hour', 3600],
  ['24h', 'last 24 h', 86_400],
  ['7d', 'last 7 days', 7 * 86_400],
  ['all', 'all time', null],
];
const LIFECYCLE = ['CrawlRequested', 'JobDispatched', 'JobCompleted', 'JobFailed', 'JobCancelled'];

export function jobProgressCell(j: Job): HTMLElement {
  const done = j.counters.pages_fetched + j.counters.pages_failed;
  if (j.status === 'running' || j.status === 'pending') {
    const bar = progressBar(0, j.status === 'pending' ? 'waiting' : `${f.count(done)} pages`);
    bar.classList.add('indeterminate');
    return bar;
  }
  return progressBar(100, `${f.count(done)} pages`);
}

export function jobsView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): Cleanup {
  let statuses = new Set((query.get('status') ?? '').split(',').filter((s) => (STATUSES as readonly string[]).includes(s)));
  let age = AGES.find((a) => a[0] === query.get('age'))?.[0] ?? 'all';
  let cursor: string | null = null;
  let jobs: Job[] = [];
  let timer: number | undefined;

  const list = h('div', { class: 'jobs-list', id: 'jobs-list' });
  const more = h('button', { type: 'button', class: 'button ghost', hidden: true }, 'Load more');
  const chips = h('div', { class: 'chips', role: 'group', 'aria-label': 'Status' });
  const ageSelect = h('select', { id: 'jobs-age', 'aria-label': 'Created' }, ...AGES.map(([v, label]) => h('option', { value: v, selected: v === age }, label)));

  function renderChips(): void {
    replace(
      chips,
      ...STATUSES.map((s) => {
        const b = h('button', { type: 'button', class: `chip${statuses.has(s) ? ' on' : ''}`, 'aria-pressed': String(statuses.has(s)), 'data-filter': s }, s);
        b.addEventListener('click', () => {
          if (statuses.has(s)) statuses.delete(s);
          else statuses.add(s);
          statuses = new Set(statuses);
          renderChips();
          void load(true);
        });
        return b;
      }),
    );
  }

  function render(): void {
    if (jobs.length === 0) {
      replace(list, empty(statuses.size || age !== 'all' ? 'No jobs match these filters.' : 'No jobs yet. Start one with “New crawl”.'));
      return;
    }
    const rows = jobs.map((j) =>
      h(
        'tr',
        { 'data-job-id': j.job_id, 'data-status': j.status, class: 'clickable', onclick: () => navigate(`/jobs/${j.job_id}`) },
        h('td', {}, h('a', { href: `#/jobs/${j.job_id}`, class: 'mono' }, f.shortId(j.job_id))),
        h('td', {}, statusBadge(j.status)),
        h('td', { class: 'progress-cell' }, jobProgressCell(j)),
        h('td', { class: 'num' }, f.count(j.counters.pages_fetched)),
        h('td', { class: `num${j.counters.pages_failed ? ' bad' : ''}` }, f.count(j.counters.pages_failed)),
        h('td', { class: 'num' }, f.count(j.counters.items_extracted)),
        h('td', { class: 'num' }, f.bytes(j.counters.bytes)),
        h('td', { title: f.time(j.timings.requested_at ?? j.timings.dispatched_at) }, f.ago(j.timings.requested_at ?? j.timings.dispatched_at)),
        h('td', { class: 'num' }, f.duration(j.timings.duration_ms)),
        h('td', { class: 'url', title: j.search_url ?? '' }, j.search_url ?? j.start_urls[0] ?? '–'),
      ),
    );
    replace(
      list,
      h(
        'table',
        { class: 'table jobs' },
        h('thead', {}, h('tr', {}, ...['Job', 'Status', 'Progress', 'Pages', 'Failed', 'Items', 'Bytes', 'Started', 'Duration', 'Start URL'].map((x) => h('th', { scope: 'col' }, x)))),
        h('tbody', {}, ...rows),
      ),
    );
  }

  async function load(reset: boolean): Promise<void> {
    replaceQuery({ status: [...statuses].join(','), age: age === 'all' ? undefined : age });
    const seconds = AGES.find((a) => a[0] === age)?.[2] ?? null;
    const params = {
      status: [...statuses].join(','),
      since: seconds ? new Date(Date.now() - seconds * 1000).toISOString() : undefined,
      limit: 50,
      cursor: reset ? undefined : (cursor ?? undefined),
    };
    try {
      const page = await ok(client.GET('/jobs', { params: { query: given(params) } }));
      jobs = reset ? page.jobs : [...jobs, ...page.jobs];
      cursor = page.next_cursor;
      more.hidden = !cursor;
      render();
    } catch (err) {
      replace(list, notice('error', errorText(err)));
    }
    window.clearTimeout(timer);
    if (jobs.some((j) => j.status === 'running' || j.status === 'pending')) timer = window.setTimeout(() => void load(true), 3000);
  }

  let debounce: number | undefined;
  const feed = new FeedSocket({
    types: LIFECYCLE,
    onEvent: () => {
      window.clearTimeout(debounce);
      debounce = window.setTimeout(() => void load(true), 300);
    },
    onGap: () => void load(true),
  });

  more.addEventListener('click', () => void load(false));
  ageSelect.addEventListener('change', () => {
    age = ageSelect.value;
    void load(true);
  });
  renderChips();
  outlet.append(
    pageHeader('Jobs', h('a', { class: 'button primary', href: '#/crawl', id: 'new-crawl' }, 'New crawl')),
    h('div', { class: 'toolbar' }, chips, ageSelect),
    list,
    more,
  );
  void load(true);
  return () => {
    feed.close();
    window.clearTimeout(timer);
    window.clearTimeout(debounce);
  };
}
