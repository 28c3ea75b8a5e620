/**
 * What the read models must say, computed straight from the events in the topics with none of
 * the projector's code: the independent side of "the read models equal the events".
 */
import type { EventMap } from '@trawl/schemas';
import type { LoggedEvent } from '@trawl/streams';

export interface ExpectedJob {
  status: string;
  user_id: string | null;
  pages_fetched: number;
  pages_failed: number;
  items_extracted: number;
  bytes: number;
  log_seq: number;
  error_code: string | null;
}

export interface Expected {
  jobs: Map<string, ExpectedJob>;
  /** `job/fetch` → ok, status, bytes. */
  pages: Map<string, { ok: boolean; status: number | null; bytes: number }>;
  /** `job/item` → fields. */
  items: Map<string, Record<string, string>>;
  /** Distinct event ids per job, items left out (they have no log line). */
  logged: Map<string, number>;
}

const later = (a: { occurred_at: Date; event_id: string }, b: { occurred_at: Date; event_id: string }) =>
  a.occurred_at.getTime() !== b.occurred_at.getTime() ? a.occurred_at > b.occurred_at : a.event_id > b.event_id;

export function expectedFrom(events: readonly LoggedEvent[]): Expected {
  const seen = new Set<string>();
  const byJob = new Map<string, { name: string; value: EventMap[keyof EventMap] }[]>();
  for (const { event } of events) {
    const v = event.value as { job_id?: string; event_id: string };
    if (!v.job_id || seen.has(v.event_id)) continue;
    seen.add(v.event_id);
    byJob.set(v.job_id, [...(byJob.get(v.job_id) ?? []), { name: event.name, value: event.value }]);
  }
  const out: Expected = { jobs: new Map(), pages: new Map(), items: new Map(), logged: new Map() };
  for (const [job, evs] of byJob) {
    const of = <N extends keyof EventMap>(n: N) => evs.filter((e) => e.name === n).map((e) => e.value as EventMap[N]);
    const fetches = new Map<string, { ok?: EventMap['PageFetched']; failed?: EventMap['PageFailed'] }>();
    for (const p of of('PageFetched')) {
      const f = fetches.get(p.fetch_id) ?? {};
      if (!f.ok || later(p, f.ok)) f.ok = p;
      fetches.set(p.fetch_id, f);
    }
    for (const p of of('PageFailed')) {
      const f = fetches.get(p.fetch_id) ?? {};
      if (!f.failed || later(p, f.failed)) f.failed = p;
      fetches.set(p.fetch_id, f);
    }
    let bytes = 0;
    for (const [fetch, f] of fetches) {
      if (f.ok) bytes += f.ok.bytes;
      out.pages.set(`${job}/${fetch}`, f.ok ? { ok: true, status: f.ok.status, bytes: f.ok.bytes } : { ok: false, status: f.failed!.status, bytes: 0 });
    }
    const items = new Map<string, EventMap['ItemExtracted']>();
    for (const i of of('ItemExtracted')) if (!items.has(i.item_key) || later(i, items.get(i.item_key)!)) items.set(i.item_key, i);
    for (const [key, i] of items) out.items.set(`${job}/${key}`, { ...i.fields });
    const failed = of('JobFailed');
    const completed = of('JobCompleted');
    const status = failed.length > 0 ? 'failed'
      : completed.length > 0 ? completed[0]!.outcome
      : of('JobCancelled').length > 0 ? 'cancelled'
      : of('JobDispatched').length > 0 || fetches.size > 0 ? 'running' : 'pending';
    const okCount = [...fetches.values()].filter((f) => f.ok).length;
    const logLines = evs.filter((e) => e.name !== 'ItemExtracted').length;
    out.jobs.set(job, {
      status,
      user_id: of('CrawlRequested')[0]?.user_id ?? of('JobDispatched')[0]?.user_id ?? null,
      pages_fetched: okCount,
      pages_failed: fetches.size - okCount,
      items_extracted: items.size,
      bytes,
      log_seq: logLines,
      error_code: failed[0]?.error_code ?? null,
    });
    out.logged.set(job, logLines);
  }
  return out;
}
