/**
 * Overlap `skip` end to end (issue 24, item 2): a schedule every 3 s crawls a slow site whose crawl
 * takes longer than that, with the dispatcher, frontier, worker and projector-pg as processes on
 * the real stack. The slots that come while a run is still going are skipped; the event log must
 * show that no two jobs of the schedule ever ran at once (each JobDispatched after the previous
 * job's JobCompleted), and every skipped slot must be visible: in the schedule's row
 * (`skipped_at`, `skipped_reason` naming the running job), in the dispatcher's metric
 * `trawl_dispatcher_slots_total{outcome="skipped",reason="OVERLAP"}` and in its log.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { JobCompleted, JobDispatched } from '@trawl/schemas';
import { CONFIG_MIGRATIONS, createSchedule, getSchedule, jobIdForSlot, migrate } from '@trawl/store';
import { Pipeline } from '../../src/pipeline.ts';
import { sleep } from './support.ts';

/** The schedule's cadence and how long each page of the site takes to answer: a run spans several slots. */
const EVERY_S = 3;
const LATENCY_MS = 1_500;
/** Runs of the schedule to watch. */
const RUNS = 3;

let site: TestSite;
let pipeline: Pipeline | undefined;

beforeAll(async () => {
  // 13 pages in three levels (1 + 3 + 9): at least three page latencies a run.
  site = await createTestSite({ pages: 13, linksPerPage: 3, itemsPerPage: 0, traps: false });
  site.setLatency(LATENCY_MS);
});
afterAll(async () => {
  await site?.close();
});
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

interface Run {
  readonly jobId: string;
  readonly dispatchedAt: number;
  completedAt?: number;
}

describe('overlap skip with a slow site', () => {
  it('never has two running jobs of the schedule, and every skipped slot is recorded', async () => {
    const p = (pipeline = await Pipeline.start({ env: { TRAWL_QUOTA_MIN_INTERVAL_SECONDS: '1' } }));
    await migrate(p.db.pool, 'config', CONFIG_MIGRATIONS);
    p.spawn('projector-pg');
    p.spawn('frontier');
    p.spawn('worker');
    await p.groupSettled('trawl-worker', 1);
    const scheduleId = `overlap-${randomUUID()}`;
    await createSchedule(p.db.pool, {
      id: scheduleId,
      owner_id: 'overlap-user',
      request: { spider: null, start_urls: [site.home], depth: 2, max_pages: 100, params: {} },
      cadence: { cron: `*/${EVERY_S} * * * * *` },
      overlap: 'skip',
    });
    const dispatcher = p.spawn('dispatcher');

    // While the runs go on, every skip the schedule's row shows (it keeps the latest).
    const skips = new Map<number, string>();
    const runs = async () => {
      const events = await p.events();
      const dispatched = events.filter((e) => e.event.name === 'JobDispatched' && (e.event.value as JobDispatched).schedule_id === scheduleId).map((e) => e.event.value as JobDispatched);
      const ids = new Set(dispatched.map((d) => d.job_id));
      const completed = events.filter((e) => e.event.name === 'JobCompleted' && ids.has((e.event.value as JobCompleted).job_id)).map((e) => e.event.value as JobCompleted);
      return { dispatched, completed };
    };
    for (const deadline = Date.now() + 300_000; ; await sleep(500)) {
      const row = (await getSchedule(p.db.pool, scheduleId))!;
      if (row.skipped_at && row.skipped_reason) skips.set(row.skipped_at.getTime(), row.skipped_reason);
      const { completed } = await runs();
      if (new Set(completed.map((c) => c.job_id)).size >= RUNS) break;
      if (Date.now() > deadline) throw new Error(`the schedule did not complete ${RUNS} runs within 300 s (skips seen: ${skips.size})`);
      p.checkChildren();
    }
    // Stop the schedule, let the tick in progress commit, then read what the dispatcher counted and logged.
    await p.db.pool.query("UPDATE schedules SET status = 'paused' WHERE id = $1", [scheduleId]);
    await sleep(3_000);
    const metrics = await fetch(`${dispatcher.operatorUrl}/metrics`, { signal: AbortSignal.timeout(10_000) }).then((r) => r.text());
    const logText = readFileSync(dispatcher.logFile, 'utf8');
    await p.kill(dispatcher);
    // What the dispatcher started before it stopped runs to its end.
    const dispatchedIds = new Set((await runs()).dispatched.map((d) => d.job_id));
    for (const deadline = Date.now() + 120_000; ; await sleep(1_000)) {
      const { completed } = await runs();
      if (new Set(completed.map((c) => c.job_id)).size === dispatchedIds.size) break;
      if (Date.now() > deadline) throw new Error('a dispatched run of the schedule did not complete within 120 s');
    }

    // The event log: one job per dispatched slot, and no two of them running at once.
    const { dispatched, completed } = await runs();
    const byJob = new Map<string, Run>();
    for (const d of dispatched) if (!byJob.has(d.job_id)) byJob.set(d.job_id, { jobId: d.job_id, dispatchedAt: d.occurred_at.getTime() });
    for (const c of completed) {
      const run = byJob.get(c.job_id)!;
      run.completedAt = Math.min(run.completedAt ?? Infinity, c.occurred_at.getTime());
      expect(c.outcome).toBe('finished');
      expect(c.pages_fetched).toBe(13);
    }
    const ordered = [...byJob.values()].sort((a, b) => a.dispatchedAt - b.dispatchedAt);
    expect(ordered.length).toBeGreaterThanOrEqual(RUNS);
    for (const [i, run] of ordered.entries()) {
      expect(run.completedAt, `run ${run.jobId} completed`).toBeDefined();
      const next = ordered[i + 1];
      if (next) expect(next.dispatchedAt, `run ${i + 2} dispatched after run ${i + 1} completed`).toBeGreaterThan(run.completedAt!);
    }
    // Every skip seen names a run of the schedule that was going at that slot.
    expect(skips.size).toBeGreaterThanOrEqual(1);
    for (const [at, reason] of skips) {
      const m = /^OVERLAP: the previous job (\S+) is still (.+)$/.exec(reason);
      expect(m, reason).not.toBeNull();
      const run = byJob.get(m![1]!);
      expect(run, `the job a skip names is one of the schedule's: ${reason}`).toBeDefined();
      // … of an earlier slot (job ids are derived from the schedule and the slot) …
      const earlier = Array.from({ length: 100 }, (_, k) => at - (k + 1) * EVERY_S * 1_000).find((slot) => jobIdForSlot(scheduleId, new Date(slot)) === run!.jobId);
      expect(earlier, `${run!.jobId} is the job of a slot before ${new Date(at).toISOString()}`).toBeDefined();
      // … not seen ended by then (the read model may show an end a moment late, never early).
      expect(at, `skipped slot ${new Date(at).toISOString()} while ${run!.jobId} ran`).toBeLessThan(run!.completedAt! + 30_000);
    }
    // The metric and the log count the same skipped slots, more than the row could show alone.
    const metric = Number(/^trawl_dispatcher_slots_total\{outcome="skipped",reason="OVERLAP"\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    const dispatchedMetric = Number(/^trawl_dispatcher_slots_total\{outcome="dispatched",reason=""\} (\d+)$/m.exec(metrics)?.[1] ?? 0);
    const logged = logText.split('\n').filter((l) => l.includes('"msg":"schedule slot skipped') && l.includes('"reason":"OVERLAP"') && l.includes(scheduleId)).length;
    expect(metric).toBeGreaterThanOrEqual(RUNS - 1);
    expect(metric).toBeGreaterThanOrEqual(skips.size);
    expect(logged).toBe(metric);
    expect(dispatchedMetric).toBeGreaterThanOrEqual(RUNS);

    console.log(`OVERLAP ${JSON.stringify({
      runs: ordered.length,
      runSeconds: ordered.map((r) => ((r.completedAt! - r.dispatchedAt) / 1_000).toFixed(1)),
      gapsSeconds: ordered.slice(1).map((r, i) => ((r.dispatchedAt - ordered[i]!.completedAt!) / 1_000).toFixed(1)),
      skippedSlots: metric, skipsSeenInRow: skips.size,
    })}`);
  }, 600_000);
});
