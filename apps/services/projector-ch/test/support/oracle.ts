/**
 * What the analytics must say, computed straight from the events in the topics: per job, page
 * events (one per event id) fetched and failed, bytes of the fetched, retries, items.
 */
import type { EventMap } from '@trawl/schemas';
import type { LoggedEvent } from '@trawl/streams';
import type { JobTotals } from '../../src/queries/analytics.ts';
import { jobRunTimesOf, type JobRunTime } from '../../src/model/job-run-time.ts';

export function expectedTotals(events: readonly LoggedEvent[]): JobTotals[] {
  const seen = new Set<string>();
  const out = new Map<string, JobTotals>();
  const of = (id: string) => out.get(id) ?? out.set(id, { job_id: id, pages_fetched: 0, pages_failed: 0, bytes: 0, items: 0, retries: 0 }).get(id)!;
  for (const { event } of events) {
    const v = event.value as { event_id: string; job_id?: string };
    if (!v.job_id || seen.has(v.event_id)) continue;
    seen.add(v.event_id);
    if (event.name === 'PageFetched') {
      const p = event.value as EventMap['PageFetched'];
      const t = of(p.job_id);
      t.pages_fetched++;
      t.bytes += p.bytes;
      t.retries += Math.max(p.attempt, 1) - 1;
    } else if (event.name === 'PageFailed') {
      const p = event.value as EventMap['PageFailed'];
      const t = of(p.job_id);
      t.pages_failed++;
      t.retries += Math.max(p.attempts, 1) - 1;
    } else if (event.name === 'ItemExtracted') {
      of(v.job_id).items++;
    }
  }
  return [...out.values()].sort((a, b) => a.job_id.localeCompare(b.job_id));
}

/** A fact's place: topic, partition, offset. */
export const factKey = (topic: string, partition: number, offset: bigint): string => `${topic}:${partition}:${offset}`;

/** The reference, written without the projector's code: in log order, an event is kept unless a kept copy lies within `window` offsets before it in its partition. */
export function expectedFacts(log: readonly { topic: string; partition: number; offset: bigint; event_id: string }[], window: bigint): Set<string> {
  const last = new Map<string, bigint>();
  const out = new Set<string>();
  for (const r of [...log].sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0))) {
    const id = `${r.topic}\u0000${r.partition}\u0000${r.event_id}`;
    const before = last.get(id);
    if (before !== undefined && r.offset - before <= window) continue;
    last.set(id, r.offset);
    out.add(factKey(r.topic, r.partition, r.offset));
  }
  return out;
}


/**
 * Each job's run time as its job events say: every event id once (its first copy in log order,
 * the one the facts keep whatever the window), times in whole seconds as the facts store them.
 */
export function expectedRunTimes(jobEvents: readonly { partition: number; offset: bigint; event: { name: string; value: unknown } }[], now: number): JobRunTime[] {
  const first = new Map<string, { job_id: string; event: string; outcome: string; at: number; offset: bigint }>();
  for (const { offset, event } of jobEvents) {
    const v = event.value as { event_id: string; job_id: string; occurred_at: Date; outcome?: string };
    const before = first.get(v.event_id);
    if (before && before.offset <= offset) continue;
    first.set(v.event_id, { job_id: v.job_id, event: event.name, outcome: event.name === 'JobCompleted' ? v.outcome ?? '' : '', at: Math.floor(v.occurred_at.getTime() / 1_000), offset });
  }
  const timed = new Set(['JobDispatched', 'JobPaused', 'JobResumed', 'JobCompleted', 'JobFailed']);
  return jobRunTimesOf([...first.values()].filter((e) => timed.has(e.event)), now);
}
