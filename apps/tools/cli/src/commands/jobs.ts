/** `trawl jobs [--status s1,s2] [--limit N] [--json]`: the caller's jobs, newest first. */
import type { ApiClient } from '../lib/api-client.ts';
import { duration, printable, styleFor, table } from '../lib/format.ts';

export async function jobs(api: ApiClient, options: { status?: string; limit: number; json: boolean }): Promise<void> {
  const query = { limit: options.limit, ...(options.status ? { status: options.status } : {}) };
  const { jobs: list } = await api.ok(api.http.GET('/jobs', { params: { query } }));
  if (options.json) return void process.stdout.write(JSON.stringify(list, null, 2) + '\n');
  if (list.length === 0) return void process.stdout.write('no jobs yet — try: npx trawl crawl <url>\n');
  const s = styleFor(process.stdout);
  const colour = (st: string) => (st === 'finished' ? s.green(st) : st === 'failed' ? s.red(st) : st === 'running' ? s.yellow(st) : st);
  const rows = [['job', 'status', 'pages', 'failed', 'items', 'started', 'took', 'start url']];
  for (const j of list) {
    const started = j.timings.requested_at ?? j.timings.dispatched_at;
    rows.push([
      printable(j.job_id),
      colour(printable(j.status)),
      String(j.counters.pages_fetched),
      String(j.counters.pages_failed),
      String(j.counters.items_extracted),
      started ? new Date(started).toISOString().replace('T', ' ').slice(0, 19) : '',
      duration(j.timings.duration_ms),
      printable(j.start_urls[0] ?? ''),
    ]);
  }
  process.stdout.write(table(rows) + '\n');
}
