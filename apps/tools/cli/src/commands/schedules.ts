/**
 * `trawl schedules list|create|pause|resume|cancel`: the caller's schedules through the API.
 * `create` submits a scheduled crawl (`POST /crawl` with `interval` and/or `schedule_at`), the
 * one way to schedule start URLs; the others act on one schedule by id.
 */
import type { Schedule } from '@trawl/client';
import type { ApiClient } from '../lib/api-client.ts';
import { CliError, UsageError } from '../lib/cli-error.ts';
import { printable, table } from '../lib/format.ts';
import { crawlBody } from './crawl.ts';

export const SCHEDULE_ACTIONS = ['pause', 'resume', 'cancel'] as const;
export type ScheduleAction = (typeof SCHEDULE_ACTIONS)[number];

export function isScheduleAction(sub: string | undefined): sub is ScheduleAction {
  return (SCHEDULE_ACTIONS as readonly (string | undefined)[]).includes(sub);
}

export interface ScheduleCreateOptions {
  readonly interval?: string;
  readonly at?: string;
  readonly depth: number;
  readonly maxPages?: number;
  readonly spider?: string;
  readonly json: boolean;
}

const when = (iso: string | null) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 19) : '–');

function cadence(s: Schedule): string {
  if (s.cron) return `cron ${s.cron}`;
  if (s.interval_ms) return `every ${s.interval_ms / 1000} s`;
  return s.run_at ? `once at ${when(s.run_at)}` : '–';
}

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

export async function listSchedules(api: ApiClient, options: { json: boolean }): Promise<void> {
  const { schedules } = await api.ok(api.http.GET('/schedules'));
  if (options.json) return print(schedules);
  if (schedules.length === 0) return void process.stdout.write('no schedules yet — try: npx trawl schedules create <url> --interval 1h\n');
  const rows = [['schedule', 'status', 'cadence', 'next run', 'last job', 'what']];
  for (const s of schedules) {
    rows.push([
      printable(s.schedule_id),
      printable(s.status) + (s.paused_reason ? ` (${printable(s.paused_reason.code)})` : ''),
      printable(cadence(s)),
      when(s.next_run),
      printable(s.last_job_id ?? '–'),
      printable(s.target_id ? `target ${s.target_id}` : (s.request?.start_urls?.[0] ?? '')),
    ]);
  }
  process.stdout.write(table(rows) + '\n');
}

export async function createSchedule(api: ApiClient, url: string, options: ScheduleCreateOptions): Promise<void> {
  if (options.interval === undefined && options.at === undefined) throw new UsageError('trawl schedules create needs --interval, --at or both');
  const answer = await api.ok(api.http.POST('/crawl', {
    body: {
      ...crawlBody(url, options),
      ...(options.interval === undefined ? {} : { interval: options.interval }),
      ...(options.at === undefined ? {} : { schedule_at: options.at }),
    },
  }));
  if (!answer.scheduled) throw new CliError(`the API started job ${answer.job_id} instead of scheduling it`);
  if (options.json) return print(answer);
  process.stdout.write(`${printable(answer.schedule_id)}\n`);
  process.stderr.write(`next run ${when(answer.next_run)} UTC, as job ${printable(answer.job_id)}\n`);
}

export interface ScheduleEditOptions {
  readonly interval?: string;
  readonly at?: string;
  readonly timeZone?: string;
  readonly overlap?: string;
  readonly json: boolean;
}

/** PATCH /schedules/:id with what was given; the API checks it as it checks a new schedule. */
export async function editSchedule(api: ApiClient, id: string, options: ScheduleEditOptions): Promise<void> {
  const patch = {
    ...(options.interval === undefined ? {} : { interval: options.interval }),
    ...(options.at === undefined ? {} : { schedule_at: options.at }),
    ...(options.timeZone === undefined ? {} : { time_zone: options.timeZone }),
    // The API refuses a value it does not know (400 VALIDATION_FAILED): the CLI passes it on as given.
    ...(options.overlap === undefined ? {} : { overlap: options.overlap as Schedule['overlap'] }),
  };
  if (Object.keys(patch).length === 0) throw new UsageError('trawl schedules edit needs --interval, --at, --time-zone or --overlap');
  const s = await api.ok(api.http.PATCH('/schedules/{id}', { params: { path: { id } }, body: patch }));
  if (options.json) return print(s);
  process.stdout.write(`${printable(s.schedule_id)}: ${printable(s.status)}${s.next_run ? `, next run ${when(s.next_run)} UTC` : ''}\n`);
}

export async function scheduleAction(api: ApiClient, action: ScheduleAction, id: string, options: { json: boolean }): Promise<void> {
  const init = { params: { path: { id } } };
  const s = await api.ok(
    action === 'pause' ? api.http.POST('/schedules/{id}/pause', init) : action === 'resume' ? api.http.POST('/schedules/{id}/resume', init) : api.http.POST('/schedules/{id}/cancel', init),
  );
  if (options.json) return print(s);
  process.stdout.write(`${printable(s.schedule_id)}: ${printable(s.status)}${s.next_run ? `, next run ${when(s.next_run)} UTC` : ''}\n`);
}
