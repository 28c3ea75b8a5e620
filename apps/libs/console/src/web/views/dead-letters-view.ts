/**
 * The caller's dead letters: what failed for good, why, after how many attempts — and a re-drive
 * that republishes the original message to its origin topic (once per dead letter; if it fails
 * again it comes back here as a new one).
 */
import { client, given, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import { navigate, replaceQuery, type Cleanup } from '../router.ts';
import type { DeadLetter } from '@trawl/client';
import { actionButton, empty, errorText, notice, pageHeader } from '../ui.ts';

/** Dead letters per page: the newest first, older ones on demand (keyset pages of the read model). */
const PAGE = 100;

export function deadLettersView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): Cleanup {
  let source = query.get('source') ?? '';
  const jobId = query.get('job') ?? '';
  const list = h('div', { id: 'dead-letters' });
  const summary = h('p', { class: 'hint', id: 'dead-letters-summary' });
  const sourceSelect = h(
    'select',
    { id: 'dlq-source', 'aria-label': 'Source' },
    h('option', { value: '' }, 'all dead-letter topics'),
    h('option', { value: 'fetch', selected: source === 'fetch' }, 'fetches (trawl.fetch.dlq)'),
    h('option', { value: 'events', selected: source === 'events' }, 'events (trawl.events.dlq)'),
  );

  function redriveCell(d: DeadLetter): Node {
    if (d.redriven_at) return h('span', { class: 'badge badge-finished', 'data-redriven': d.id, title: f.time(d.redriven_at) }, `re-driven ${f.ago(d.redriven_at)}`);
    const over = d.job_status === 'finished' || d.job_status === 'failed' || d.job_status === 'cancelled';
    return actionButton(
      over ? 'Re-drive (job over)' : 'Re-drive',
      async () => {
        if (!window.confirm(`Republish this ${d.event ?? 'message'} to ${d.origin.topic}?`)) return;
        await ok(client.POST('/dead-letters/{id}/redrive', { params: { path: { id: d.id } } }));
        await load();
      },
      {
        class: 'button small',
        'data-redrive': d.id,
        title: over ? `The job is ${d.job_status}: workers skip the fetches of jobs that are over, so this only republishes the message.` : `Republish to ${d.origin.topic}`,
      },
    );
  }

  const more = h('div', { class: 'toolbar', id: 'dead-letters-more' });
  /** The rows shown so far (the newest page and the older ones asked for), and where the next page starts. */
  let shown: DeadLetter[] = [];
  let nextCursor: string | null = null;

  function row(d: DeadLetter): Node {
    return h(
      'tr',
      { 'data-dead-letter': d.id },
      h('td', { title: f.time(d.failed_at) }, f.ago(d.failed_at)),
      h('td', {}, h('div', { class: 'small muted' }, d.event ?? '?'), h('div', { class: 'url', title: d.url ?? '' }, d.url ?? d.key ?? '–')),
      h(
        'td',
        { class: 'why' },
        h('div', {}, h('strong', {}, d.error_code ?? d.error_class ?? 'error'), d.reason ? h('span', { class: 'badge badge-failed small' }, d.reason) : null),
        h('div', { class: 'small' }, d.error_message ?? ''),
      ),
      h('td', { class: 'num' }, String(d.attempts ?? '–')),
      h('td', {}, d.job_id ? h('a', { href: `#/jobs/${d.job_id}`, class: 'mono' }, f.shortId(d.job_id)) : '–'),
      h('td', { class: 'small mono' }, `${d.origin.topic} [${d.origin.partition}] @${d.origin.offset}`),
      h('td', {}, redriveCell(d)),
    );
  }

  function render(): void {
    summary.textContent = shown.length === 0 ? '' : `${f.count(shown.length)} dead letter${shown.length === 1 ? '' : 's'} shown, newest first${nextCursor ? '; older ones below' : ''}.`;
    replace(more, nextCursor ? h('button', { type: 'button', class: 'button ghost', id: 'dlq-older', onclick: () => void older() }, 'Show older') : null);
    if (shown.length === 0) {
      replace(list, empty('No dead letters: nothing of yours has failed for good.'));
      return;
    }
    replace(
      list,
      h(
        'table',
        { class: 'table dead-letters' },
        h('thead', {}, h('tr', {}, ...['Failed', 'What', 'Why', 'Attempts', 'Job', 'Origin', ''].map((x) => h('th', { scope: 'col' }, x)))),
        h('tbody', {}, ...shown.map(row)),
      ),
    );
  }

  async function page(cursor: string | null): Promise<{ dead_letters: DeadLetter[]; next_cursor: string | null }> {
    const query = given({ source: source as 'fetch' | 'events' | '', job_id: jobId, limit: PAGE, cursor: cursor ?? undefined });
    return ok(client.GET('/dead-letters', { params: { query: query as typeof query & { source?: 'fetch' | 'events' } } }));
  }

  /** The newest page again (a refresh, a filter, a re-drive): older pages asked for are dropped. */
  async function load(): Promise<void> {
    replaceQuery({ source, job: jobId });
    try {
      const r = await page(null);
      shown = r.dead_letters;
      nextCursor = r.next_cursor;
      render();
    } catch (err) {
      replace(list, notice('error', errorText(err)));
    }
  }

  async function older(): Promise<void> {
    if (!nextCursor) return;
    try {
      const r = await page(nextCursor);
      shown = [...shown, ...r.dead_letters];
      nextCursor = r.next_cursor;
      render();
    } catch (err) {
      replace(more, notice('error', errorText(err)));
    }
  }

  sourceSelect.addEventListener('change', () => {
    source = sourceSelect.value;
    void load();
  });
  // Refreshed while only the newest page is shown; a reader of older pages keeps them.
  const timer = window.setInterval(() => {
    if (shown.length <= PAGE) void load();
  }, 15_000);
  outlet.append(
    pageHeader('Dead letters', h('button', { type: 'button', class: 'button ghost', id: 'dlq-reload', onclick: () => void load() }, 'Refresh')),
    h('div', { class: 'toolbar' }, sourceSelect, jobId ? h('span', { class: 'chip on' }, `job ${f.shortId(jobId)} `, h('button', { type: 'button', class: 'link', onclick: () => navigate('/dead-letters') }, '×')) : null),
    summary,
    list,
    more,
    h(
      'p',
      { class: 'hint small' },
      'A re-drive republishes the original message, byte for byte, to the topic it was first read from, once; if it fails again it comes back here as a new dead letter. ',
      'Workers skip fetches of jobs that are over, so re-drive a fetch while its job runs (or crawl again).',
    ),
  );
  void load();
  return () => window.clearInterval(timer);
}
