/**
 * The job view's "Changes" tab, for a run of a schedule: what changed since the schedule's previous
 * finished run (`GET /jobs/:id/changes`, summarised by model/change-summary.ts), every value put
 * in as text. A changed, new or gone page opens its stored content.
 */
import { client, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import { changeSummary } from '../model/change-summary.ts';
import { empty, notice } from '../ui.ts';

export async function loadChanges(box: HTMLElement, jobId: string, openContent: (jobId: string, fetchId: string, url: string) => void): Promise<void> {
  const summary = changeSummary(await ok(client.GET('/jobs/{id}/changes', { params: { path: { id: jobId }, query: { limit: 500 } } })));
  const counts = h(
    'dl',
    { class: 'counters change-counts' },
    ...summary.counts.map((c) => h('div', { 'data-change-count': c.key }, h('dt', {}, c.label), h('dd', {}, f.count(c.value)))),
  );
  const sections = summary.sections.map((s) =>
    h(
      'section',
      { class: 'change-section', 'data-change-section': s.key },
      h('h3', {}, s.title),
      h(
        'table',
        { class: 'table' },
        h(
          'tbody',
          {},
          ...s.rows.map((r) =>
            h(
              'tr',
              { 'data-url': r.url },
              h('td', { class: 'url' }, r.url),
              h('td', { class: 'small' }, r.detail),
              h('td', {}, r.fetchId && r.jobId ? h('button', { type: 'button', class: 'button ghost', 'data-view-content': r.fetchId, onclick: () => openContent(r.jobId!, r.fetchId!, r.url) }, 'Content') : ''),
            ),
          ),
        ),
      ),
    ),
  );
  replace(
    box,
    h('p', { class: 'change-headline', id: 'change-headline' }, summary.headline),
    ...summary.notices.map((n) => notice('info', n)),
    counts,
    ...(sections.length ? sections : [empty('Nothing changed.')]),
  );
}
