/**
 * Shows a job's progress until it ends: a live bar from the WebSocket feed, with
 * `GET /jobs/:id/status` as a backstop every few seconds (the feed drops events for slow clients
 * and starts "about now"; the status is the truth), then a summary.
 */
import type { Job } from '@trawl/client';
import type { ApiClient } from './api-client.ts';
import { bytes, duration, printable, styleFor } from './format.ts';
import type { FeedConnection } from './live-feed.ts';
import { ProgressModel, renderBar, type FeedEventMessage } from './progress.ts';

const TERMINAL = new Set(['finished', 'failed', 'cancelled']);
const BACKSTOP_MS = 3_000;

export async function followJob(
  api: ApiClient,
  jobId: string,
  feed: FeedConnection | null,
  plan: { startUrls: readonly string[]; depth: number; maxPages: number },
): Promise<Job> {
  const err = process.stderr;
  const model = new ProgressModel(plan.startUrls, { maxDepth: plan.depth, maxPages: plan.maxPages });
  const tty = Boolean(err.isTTY);
  let lastDraw = 0;
  let lastLine = '';
  const draw = (force = false) => {
    const now = Date.now();
    if (!force && now - lastDraw < (tty ? 100 : 2_000)) return;
    const line = renderBar(model.snapshot, 28, bytes);
    // Off a terminal (CI, a log file) only changes are worth a line.
    if (!tty && line === lastLine) return;
    lastDraw = now;
    lastLine = line;
    err.write(tty ? `\r${line}\x1b[K` : `${line}\n`);
  };

  let wake: () => void = () => undefined;
  feed?.onMessage((m) => {
    if (m.type === 'dropped') return void (wake(), undefined);
    if (m.type !== 'event' || (m as unknown as FeedEventMessage).job_id !== jobId) return;
    model.apply(m as unknown as FeedEventMessage);
    draw();
    if (model.snapshot.done) wake();
  });

  let status: Job;
  for (;;) {
    status = await api.ok(api.http.GET('/jobs/{id}/status', { params: { path: { id: jobId } } }));
    model.counted(status.counters);
    if (TERMINAL.has(status.status)) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, BACKSTOP_MS);
    });
    draw(true);
  }
  model.finish(status.status, status.error?.message ?? null);
  draw(true);
  if (tty) err.write('\n');
  return status;
}

export function summary(status: Job): string {
  const s = styleFor(process.stdout);
  const c = status.counters;
  const shown = printable(status.status);
  const outcome = shown === 'finished' ? s.green(shown) : shown === 'failed' ? s.red(shown) : s.yellow(shown);
  const lines = [
    `job ${printable(status.job_id)} ${outcome} in ${duration(status.timings.duration_ms)}`,
    `  pages   ${c.pages_fetched} fetched, ${c.pages_failed} failed (${c.urls_seen} URLs seen)`,
    `  items   ${c.items_extracted}`,
    `  bytes   ${bytes(c.bytes)}`,
  ];
  if (status.error?.message) lines.push(`  error   ${printable(status.error.code ?? '')} ${printable(status.error.message)}`);
  return lines.join('\n');
}
