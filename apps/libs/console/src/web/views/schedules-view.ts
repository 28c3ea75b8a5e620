/** The caller's schedules: when they run next, what they last started; pause, resume, cancel. */
import { client, ok } from '../api.ts';
import { h, replace } from '../dom.ts';
import * as f from '../format.ts';
import type { Schedule } from '@trawl/client';
import { actionButton, empty, errorText, notice, pageHeader, statusBadge } from '../ui.ts';

function cadence(s: Schedule): string {
  if (s.cron) return `cron ${s.cron}`;
  if (s.interval_ms) return `every ${f.duration(s.interval_ms)}`;
  return s.run_at ? `once at ${f.time(s.run_at)}` : 'once';
}

export async function schedulesView(outlet: HTMLElement, _params: unknown, query: URLSearchParams): Promise<void> {
  const list = h('div', { id: 'schedules' });
  const message = h('div');
  const targetSelect = h('select', { id: 'schedule-target', required: true });
  const interval = h('input', { id: 'schedule-interval', placeholder: '1h, 15m, or cron (UTC)' });

  async function load(): Promise<void> {
    try {
      const { schedules } = await ok(client.GET('/schedules'));
      if (schedules.length === 0) {
        replace(list, empty('No schedules. Schedule a target below, or start a repeating crawl from “New crawl”.'));
        return;
      }
      const act = (s: Schedule, verb: 'pause' | 'resume' | 'cancel') =>
        actionButton(verb, async () => {
          await ok(client.POST(`/schedules/{id}/${verb}`, { params: { path: { id: s.schedule_id } } }));
          await load();
        }, { class: `button small${verb === 'cancel' ? ' danger' : ''}` });
      replace(
        list,
        h(
          'table',
          { class: 'table' },
          h('thead', {}, h('tr', {}, ...['Schedule', 'Status', 'What', 'Cadence', 'Next run', 'Last job', ''].map((x) => h('th', { scope: 'col' }, x)))),
          h(
            'tbody',
            {},
            ...schedules.map((s) =>
              h(
                'tr',
                { 'data-schedule': s.schedule_id, class: s.schedule_id === query.get('created') ? 'highlight' : '' },
                h('td', { class: 'mono' }, s.schedule_id.length > 20 ? f.shortId(s.schedule_id) : s.schedule_id),
                h('td', {}, statusBadge(s.status)),
                h('td', { class: 'url' }, s.target_id ? `target ${s.target_id}` : (s.request?.start_urls.join(' ') ?? '–')),
                h('td', {}, cadence(s)),
                h('td', { title: s.next_runs.map(f.time).join('\n') }, s.next_run ? `${f.time(s.next_run)} (${f.ago(s.next_run)})` : '–'),
                h('td', {}, s.last_job_id ? h('a', { href: `#/jobs/${s.last_job_id}`, class: 'mono' }, f.shortId(s.last_job_id)) : '–'),
                h('td', { class: 'actions' }, s.status === 'active' ? act(s, 'pause') : null, s.status === 'paused' ? act(s, 'resume') : null, s.status === 'active' || s.status === 'paused' ? act(s, 'cancel') : null),
              ),
            ),
          ),
        ),
      );
    } catch (err) {
      replace(list, notice('error', errorText(err)));
    }
  }

  try {
    const { targets } = await ok(client.GET('/targets'));
    replace(targetSelect, ...targets.filter((t) => t.active).map((t) => h('option', { value: t.id }, `${t.name ?? t.id} — ${t.search_url}`)));
  } catch (err) {
    message.append(notice('warn', errorText(err)));
  }

  const form = h('form', { class: 'card form inline', id: 'schedule-form' }, h('h2', {}, 'Schedule a target'), targetSelect, interval, h('button', { type: 'submit', class: 'button primary' }, 'Schedule'), message);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    message.replaceChildren();
    try {
      await ok(client.POST('/schedules', { body: { target_id: targetSelect.value, ...(interval.value.trim() ? { interval: interval.value.trim() } : {}) } }));
      interval.value = '';
      await load();
    } catch (err) {
      message.append(notice('error', errorText(err)));
    }
  });
  outlet.append(pageHeader('Schedules'), list, form);
  await load();
}
