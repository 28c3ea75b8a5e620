/**
 * One job, live: progress from the WebSocket feed (status read once, then every page event
 * moves the bar), the log over SSE, pages (each one's stored content, shown as text) and items
 * with exports, a schedule's run's changes since its previous run, and cancel. The status is
 * re-read every few seconds while the job runs too, so a dropped socket costs freshness, not
 * correctness; counters only ever go up.
 */
import { client, download, given, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import { FeedSocket } from '../live/feed-socket.ts';
import { followLog, type LogLine } from '../live/log-stream.ts';
import { JobProgress } from '../model/job-progress.ts';
import type { Cleanup } from '../router.ts';
import type { Job } from '@trawl/client';
import { actionButton, empty, errorText, notice, progressBar, statusBadge } from '../ui.ts';
import { loadChanges } from './job-changes-pane.ts';
import { recalledLimits } from './new-crawl-view.ts';
import { showPageContent } from './page-content.ts';

const TERMINAL = new Set(['finished', 'failed', 'cancelled']);
const MAX_LOG_LINES = 2000;

export function jobView(outlet: HTMLElement, params: Readonly<Record<string, string>>, query: URLSearchParams): Cleanup {
  const jobId = params.id!;
  const progress = new JobProgress(recalledLimits(jobId));
  const percents: number[] = [];
  let job: Job | undefined;
  let pollTimer: number | undefined;
  let tab = query.get('tab') ?? 'log';

  const title = h('h1', {}, 'Job ', h('span', { class: 'mono' }, f.shortId(jobId)));
  const badge = h('span', { id: 'job-status' });
  const feedState = h('span', { class: 'feed-state', id: 'feed-state', title: 'live feed' }, 'connecting');
  const actions = h('div', { class: 'actions' });
  const bar = h('div', { id: 'job-progress' });
  const counters = h('dl', { class: 'counters', id: 'job-counters' });
  const details = h('div', { class: 'job-details' });
  const errorBox = h('div');
  const logBox = h('ol', { class: 'log', id: 'job-log', 'aria-live': 'polite' });
  const pagesBox = h('div', { id: 'job-pages' });
  const itemsBox = h('div', { id: 'job-items' });
  const changesBox = h('div', { id: 'job-changes' });
  const contentBox = h('div', { id: 'page-content' });
  contentBox.hidden = true;
  const tabs = h('div', { class: 'tabs', role: 'tablist' });
  const panes: Record<string, HTMLElement> = { log: logBox, pages: pagesBox, items: itemsBox, changes: changesBox };
  const openContent = (ofJob: string, fetchId: string, url: string, kept: readonly string[] | null): void => {
    showPageContent(contentBox, ofJob, fetchId, url, kept);
    contentBox.scrollIntoView({ block: 'nearest' });
  };

  function renderProgress(): void {
    const s = progress.snapshot();
    if (percents[percents.length - 1] !== s.percent) percents.push(s.percent);
    const label = TERMINAL.has(s.status) ? `${f.count(s.total)} pages · ${s.status}` : `${f.count(s.fetched + s.failed)} of ~${f.count(s.total)} pages · ${f.percent(s.percent)}`;
    const el = progressBar(s.percent, label);
    el.classList.toggle('done', s.status === 'finished');
    el.classList.toggle('stopped', s.status === 'cancelled' || s.status === 'failed');
    replace(bar, el);
    Object.assign(bar.dataset, { percent: String(s.percent), status: s.status, liveEvents: String(s.liveEvents), history: percents.join(',') });
    replace(badge, statusBadge(s.status));
    replace(
      counters,
      ...(
        [
          ['Fetched', f.count(s.fetched), 'fetched'],
          ['Failed', f.count(s.failed), 'failed'],
          ['Items', f.count(s.items), 'items'],
          ['Bytes', f.bytes(s.bytes), 'bytes'],
          ['Duration', f.duration(job?.timings.duration_ms ?? null), 'duration'],
        ] as const
      ).map(([k, v, key]) => h('div', { 'data-counter': key }, h('dt', {}, k), h('dd', {}, v))),
    );
    replace(actions, ...actionButtons(s.status));
  }

  function actionButtons(status: string): Node[] {
    const out: Node[] = [h('a', { class: 'button ghost', href: `#/metrics?job=${jobId}`, id: 'job-metrics' }, 'Metrics')];
    if (!TERMINAL.has(status) && status !== 'cancelling') {
      out.unshift(
        actionButton(
          'Cancel job',
          async () => {
            if (!window.confirm('Cancel this job? Outstanding fetches are dropped.')) return;
            await ok(client.POST('/jobs/{id}/cancel', { params: { path: { id: jobId } } }));
            progress.applyEvent('JobCancelled', { job_id: jobId });
            renderProgress();
          },
          { id: 'cancel-job', class: 'button danger' },
        ),
      );
    }
    return out;
  }

  function renderDetails(j: Job): void {
    replace(
      details,
      h(
        'dl',
        { class: 'facts' },
        h('dt', {}, 'Start URLs'),
        h('dd', {}, ...j.start_urls.map((u) => h('div', { class: 'url' }, u))),
        h('dt', {}, 'Spider'),
        h('dd', {}, j.website_id ?? 'none'),
        h('dt', {}, 'Requested'),
        h('dd', {}, f.time(j.timings.requested_at ?? j.timings.dispatched_at)),
        h('dt', {}, 'Finished'),
        h('dd', {}, f.time(j.timings.finished_at)),
        j.schedule_id ? [h('dt', {}, 'Schedule'), h('dd', { class: 'mono' }, j.schedule_id)] : null,
        // adaptive_throttle: what the throttle last chose per host (the job view's `throttle`).
        j.throttle?.length
          ? [h('dt', {}, 'Throttle'), h('dd', { id: 'job-throttle' }, ...j.throttle.map((t) => h('div', {}, h('span', { class: 'mono' }, t.host), ` ${f.count(t.delay_ms)} ms apart, ${f.count(t.concurrency)} in flight`)))]
          : null,
      ),
    );
    replace(errorBox, j.error ? notice('error', `${j.error.code ?? 'error'}: ${j.error.message ?? ''}`) : null);
  }

  async function refreshStatus(): Promise<void> {
    window.clearTimeout(pollTimer);
    try {
      const hadSchedule = Boolean(job?.schedule_id);
      job = await ok(client.GET('/jobs/{id}/status', { params: { path: { id: jobId } } }));
      if (Boolean(job.schedule_id) !== hadSchedule) renderTabs();
      progress.applyStatus(job);
      renderDetails(job);
      renderProgress();
      if (TERMINAL.has(job.status) && tab !== 'log') void loadTab();
    } catch (err) {
      replace(errorBox, notice('error', errorText(err)));
      return;
    }
    if (!TERMINAL.has(job.status)) pollTimer = window.setTimeout(() => void refreshStatus(), 2500);
  }

  function appendLog(line: LogLine): void {
    logBox.append(h('li', { class: `log-${line.level}`, 'data-seq': line.seq }, h('time', {}, new Date(line.ts).toLocaleTimeString()), h('span', {}, line.msg)));
    while (logBox.childElementCount > MAX_LOG_LINES) logBox.firstElementChild?.remove();
    if (tab === 'log') logBox.scrollTop = logBox.scrollHeight;
  }

  async function loadPages(cursor?: string): Promise<void> {
    const page = await ok(client.GET('/jobs/{id}/pages', { params: { path: { id: jobId }, query: given({ limit: 100, cursor }) } }));
    const rows = page.pages.map((p) =>
      h(
        'tr',
        { class: p.ok ? '' : 'bad-row', 'data-fetch-id': p.fetch_id },
        h('td', { class: 'num' }, p.ok ? String(p.status ?? '–') : (p.error_code ?? 'failed')),
        h('td', { class: 'url', title: p.final_url ?? p.url }, p.url),
        h('td', { class: 'num' }, f.bytes(p.bytes)),
        h('td', { class: 'num' }, f.ms(p.fetch_ms)),
        h('td', { class: 'num' }, String(p.depth ?? '–')),
        h('td', { class: 'num' }, String(p.item_count ?? 0)),
        h('td', { class: 'num' }, String(p.attempts ?? 1)),
        h('td', { class: 'small' }, p.error_message ?? ''),
        h(
          'td',
          {},
          p.formats?.length
            ? h('button', { type: 'button', class: 'button ghost', 'data-view-content': p.fetch_id, onclick: () => openContent(jobId, p.fetch_id, p.url, p.formats.map((x) => x.format)) }, 'View')
            : '',
        ),
      ),
    );
    const table =
      cursor && pagesBox.querySelector('tbody')
        ? pagesBox.querySelector('table')!
        : h('table', { class: 'table pages' }, h('thead', {}, h('tr', {}, ...['Status', 'URL', 'Bytes', 'Time', 'Depth', 'Items', 'Attempts', 'Error', 'Content'].map((x) => h('th', { scope: 'col' }, x)))), h('tbody'));
    table.querySelector('tbody')!.append(...rows);
    const more = page.next_cursor ? h('button', { type: 'button', class: 'button ghost load-more', onclick: () => void loadPages(page.next_cursor!) }, 'Load more') : null;
    if (!cursor) replace(pagesBox, page.pages.length ? table : empty('No pages yet.'), more);
    else {
      pagesBox.querySelector('.load-more')?.remove();
      if (more) pagesBox.append(more);
    }
  }

  async function loadItems(cursor?: string): Promise<void> {
    const page = await ok(client.GET('/jobs/{id}/items', { params: { path: { id: jobId }, query: given({ limit: 100, cursor }) } }));
    const fields = [...new Set(page.items.flatMap((i) => Object.keys(i.fields)))].slice(0, 8);
    const exports = h(
      'div',
      { class: 'exports' },
      'Export all items: ',
      actionButton('NDJSON', () => download(`/jobs/${jobId}/items?format=ndjson`, `trawl-${f.shortId(jobId)}-items.ndjson`), { id: 'export-ndjson', class: 'button ghost' }),
      actionButton('CSV', () => download(`/jobs/${jobId}/items?format=csv`, `trawl-${f.shortId(jobId)}-items.csv`), { id: 'export-csv', class: 'button ghost' }),
    );
    const table = h(
      'table',
      { class: 'table items' },
      h('thead', {}, h('tr', {}, ...[...fields, 'Page'].map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', {}, ...page.items.map((i) => h('tr', {}, ...fields.map((k) => h('td', {}, i.fields[k] ?? '')), h('td', { class: 'url' }, i.url)))),
    );
    const more = page.next_cursor ? h('button', { type: 'button', class: 'button ghost load-more', onclick: () => void loadItems(page.next_cursor!) }, 'Load more') : null;
    if (cursor) {
      itemsBox.querySelector('tbody')?.append(...table.querySelectorAll('tbody tr'));
      itemsBox.querySelector('.load-more')?.remove();
      if (more) itemsBox.append(more);
    } else replace(itemsBox, exports, page.items.length ? table : empty('No items yet.'), more);
  }

  async function loadTab(): Promise<void> {
    try {
      if (tab === 'pages') await loadPages();
      if (tab === 'items') await loadItems();
      if (tab === 'changes') await loadChanges(changesBox, jobId, (ofJob, fetchId, url) => openContent(ofJob, fetchId, url, null));
    } catch (err) {
      replace(panes[tab]!, notice('error', errorText(err)));
    }
  }

  function renderTabs(): void {
    replace(
      tabs,
      ...(job?.schedule_id ? (['log', 'pages', 'items', 'changes'] as const) : (['log', 'pages', 'items'] as const)).map((name) => {
        const b = h('button', { type: 'button', role: 'tab', class: `tab${tab === name ? ' on' : ''}`, 'aria-selected': String(tab === name), id: `tab-${name}` }, name[0]!.toUpperCase() + name.slice(1));
        b.addEventListener('click', () => {
          tab = name;
          renderTabs();
          void loadTab();
        });
        return b;
      }),
    );
    for (const [name, pane] of Object.entries(panes)) pane.hidden = name !== tab;
  }

  let tabReload: number | undefined;
  const feed = new FeedSocket({
    jobId,
    onEvent: (name, _job, data) => {
      if (!progress.applyEvent(name, data)) return;
      renderProgress();
      if (name === 'JobCompleted' || name === 'JobFailed') void refreshStatus();
      else if (tab !== 'log') {
        // Page events come in bursts: reload the visible table at most once a second.
        window.clearTimeout(tabReload);
        tabReload = window.setTimeout(() => void loadTab(), 1000);
      }
    },
    onGap: () => void refreshStatus(),
    onState: (state) => {
      feedState.textContent = state;
      feedState.dataset.state = state;
    },
  });

  const stopLog = followLog(jobId, appendLog, () => void refreshStatus());
  outlet.append(
    h('header', { class: 'page-header' }, h('div', { class: 'job-title' }, title, badge, feedState), actions),
    query.get('cached') ? notice('info', 'An identical crawl ran recently: this is that job (tick “fresh” to crawl again).') : '',
    h('section', { class: 'card' }, bar, counters),
    errorBox,
    details,
    tabs,
    logBox,
    pagesBox,
    itemsBox,
    changesBox,
    contentBox,
  );
  renderProgress();
  renderTabs();
  void refreshStatus().then(() => loadTab());
  return () => {
    feed.close();
    stopLog();
    window.clearTimeout(pollTimer);
    window.clearTimeout(tabReload);
  };
}
