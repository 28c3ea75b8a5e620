/**
 * Loads and saves the frontier's per-job state. A state is cached in memory with the row's
 * version; each batch first checks the versions of its jobs (one query), so a cache made stale by a
 * rebalance, or by a transaction that rolled back after the cache was updated, is reloaded.
 */
import type { PoolClient } from '@trawl/store';
import { initialFrontierState, type FrontierEmit, type FrontierState, type OutstandingFetch, type QueuedFetch } from '@trawl/crawl';

interface Cached {
  readonly state: FrontierState;
  readonly version: number;
}

interface JobRow {
  job_id: string;
  user_id: string | null;
  status: FrontierState['status'];
  spec: FrontierState['spec'];
  params: FrontierState['params'] | null;
  paused: boolean;
  counters: FrontierState['counters'];
  started_at: number | null;
  dispatch_event_id: string | null;
  active_at: number | null;
  version: number;
}

export class FrontierStore {
  private readonly cache = new Map<string, Cached>();

  constructor(private readonly maxCachedJobs = 10_000) {}

  /** The current state of each job (initial state for a job never seen), valid inside `tx`. */
  async load(tx: PoolClient, jobIds: readonly string[]): Promise<Map<string, Cached>> {
    const out = new Map<string, Cached>();
    if (jobIds.length === 0) return out;
    // Row locks: a second frontier replica that (during a rebalance) still works on the same job
    // waits here instead of deciding from the same state twice.
    const { rows } = await tx.query<JobRow>(
      `SELECT job_id, user_id, status, spec, params, paused, counters, started_at, dispatch_event_id, active_at, version
       FROM frontier_jobs WHERE job_id = ANY($1) FOR UPDATE`,
      [jobIds],
    );
    const byId = new Map(rows.map((r) => [r.job_id, r]));
    const stale: JobRow[] = [];
    for (const id of jobIds) {
      const row = byId.get(id);
      const cached = this.cache.get(id);
      if (!row) out.set(id, { state: initialFrontierState(id), version: 0 });
      else if (cached && cached.version === row.version) out.set(id, cached);
      else stale.push(row);
    }
    if (stale.length > 0) {
      const urls = await tx.query<{ job_id: string; fetch_id: string; url: string; depth: number; done: boolean; queued: boolean; referrer: string | null }>(
        'SELECT job_id, fetch_id, url, depth, done, queued, referrer FROM frontier_urls WHERE job_id = ANY($1)',
        [stale.map((r) => r.job_id)],
      );
      const seen = new Map<string, Record<string, true>>();
      const outstanding = new Map<string, Record<string, OutstandingFetch>>();
      const queued = new Map<string, Record<string, QueuedFetch>>();
      for (const u of urls.rows) {
        let s = seen.get(u.job_id);
        if (!s) seen.set(u.job_id, (s = {}));
        s[u.url] = true;
        if (u.queued) {
          let q = queued.get(u.job_id);
          if (!q) queued.set(u.job_id, (q = {}));
          q[u.fetch_id] = { url: u.url, depth: u.depth, referrer: u.referrer };
        } else if (!u.done) {
          let o = outstanding.get(u.job_id);
          if (!o) outstanding.set(u.job_id, (o = {}));
          o[u.fetch_id] = { url: u.url, depth: u.depth };
        }
      }
      for (const r of stale) {
        const state: FrontierState = {
          job_id: r.job_id,
          user_id: r.user_id,
          status: r.status,
          spec: r.spec,
          params: r.params ?? {},
          counters: r.counters,
          started_at: r.started_at,
          dispatch_event_id: r.dispatch_event_id,
          active_at: r.active_at,
          seen: seen.get(r.job_id) ?? {},
          outstanding: outstanding.get(r.job_id) ?? {},
          paused: r.paused,
          // A finished job's leftover queue is nothing it will request.
          queued: r.status === 'running' || r.status === 'new' ? (queued.get(r.job_id) ?? {}) : {},
        };
        out.set(r.job_id, { state, version: r.version });
      }
    }
    return out;
  }

  /**
   * Writes what changed and caches `after`, in one statement (one round trip per job and batch).
   * `finished`: the fetch ids this batch finished. The processor decides in place (`after` may be
   * `before.state` itself), so it passes them; without them they are the difference of the two
   * outstanding maps, which needs `before.state` untouched.
   */
  async save(
    tx: PoolClient,
    before: Cached,
    after: FrontierState,
    emitted: readonly FrontierEmit[],
    finished?: readonly string[],
    queued: readonly (QueuedFetch & { readonly fetch_id: string })[] = [],
  ): Promise<void> {
    const version = before.version + 1;
    const requested = emitted.flatMap((e) => (e.type === 'FetchRequested' ? [e.data] : []));
    const done = finished ?? Object.keys(before.state.outstanding).filter((id) => !Object.hasOwn(after.outstanding, id));
    const urls = [...requested.map((r) => ({ ...r, queued: false })), ...queued.map((q) => ({ ...q, queued: true }))];
    // Data-modifying CTEs run whatever the final SELECT reads. The URL insert and the done update
    // never touch the same row in one batch: a fetch requested now cannot have finished yet. A
    // queued URL that is requested now (its job resumed) already has its row: it stops being queued.
    await tx.query(
      `WITH job AS (
         INSERT INTO frontier_jobs (job_id, user_id, status, spec, params, paused, counters, started_at, dispatch_event_id, active_at, version)
         VALUES ($1, $17, $2, $3, $13, $14, $4, $5, $6, $12, $7)
         ON CONFLICT (job_id) DO UPDATE SET user_id = EXCLUDED.user_id, status = EXCLUDED.status, spec = EXCLUDED.spec, params = EXCLUDED.params,
           paused = EXCLUDED.paused, counters = EXCLUDED.counters,
           started_at = EXCLUDED.started_at, dispatch_event_id = EXCLUDED.dispatch_event_id, active_at = EXCLUDED.active_at,
           version = EXCLUDED.version, updated_at = now()
       ), urls AS (
         INSERT INTO frontier_urls (job_id, fetch_id, url, depth, queued, referrer)
         SELECT $1, f, u, d, q, r FROM unnest($8::text[], $9::text[], $10::int[], $15::boolean[], $16::text[]) AS t(f, u, d, q, r)
         ON CONFLICT (job_id, fetch_id) DO UPDATE SET queued = false WHERE frontier_urls.queued AND NOT EXCLUDED.queued
       ), done AS (
         UPDATE frontier_urls SET done = true WHERE job_id = $1 AND fetch_id = ANY($11::text[])
       )
       SELECT 1`,
      [after.job_id, after.status, after.spec ? JSON.stringify(after.spec) : null, JSON.stringify(after.counters),
        after.started_at, after.dispatch_event_id, version,
        urls.map((r) => r.fetch_id), urls.map((r) => r.url), urls.map((r) => r.depth), done, after.active_at,
        JSON.stringify(after.params), after.paused, urls.map((r) => r.queued), urls.map((r) => r.referrer), after.user_id],
    );
    this.remember(after.job_id, { state: after, version });
  }

  /** Drops cached states (their batch failed after deciding in place): the next load reads Postgres. */
  forget(jobIds: Iterable<string>): void {
    for (const id of jobIds) this.cache.delete(id);
  }

  private remember(jobId: string, entry: Cached): void {
    this.cache.delete(jobId);
    // Finished jobs leave the cache: their state is never needed again but for redeliveries.
    if (entry.state.status === 'running' || entry.state.status === 'new') this.cache.set(jobId, entry);
    if (this.cache.size > this.maxCachedJobs) this.cache.delete(this.cache.keys().next().value!);
  }

  /**
   * Running jobs, not paused, that have not moved since `silentSince` (epoch ms), the longest silent first: the
   * candidates of a deadline tick. Read without locks; the tick locks and re-reads each one.
   */
  async silentJobs(db: Pick<PoolClient, 'query'>, silentSince: number, limit: number): Promise<string[]> {
    const { rows } = await db.query<{ job_id: string }>(
      `SELECT job_id FROM frontier_jobs WHERE status = 'running' AND NOT paused AND active_at <= $1 ORDER BY active_at LIMIT $2`,
      [silentSince, limit],
    );
    return rows.map((r) => r.job_id);
  }

  get cachedJobs(): number {
    return this.cache.size;
  }
}
