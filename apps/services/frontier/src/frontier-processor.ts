/**
 * Applies a batch of job and page events to the frontier: decide per job, produce what the
 * decisions emit, then save the new states. It runs inside the projection transaction that also
 * stores the consumed offsets, so the order is the one invariant 3 asks for: the new fetch
 * requests (and any JobCompleted) are acknowledged by Kafka first, then state and offsets commit
 * together. A crash in between replays the batch from the old state, and the deterministic event
 * ids make the re-emitted events duplicates that consumers drop.
 */
import type { CachedPage, EventMap, EventName } from '@trawl/schemas';
import type { EventProducer, Logger } from '@trawl/streams';
import type { PoolClient } from '@trawl/store';
import { bySpecReference, decideAll, hostOf, withInlineSpec, type DeadlineTick, type FrontierEmit, type FrontierEvent, type FrontierState } from '@trawl/crawl';
import type { FrontierStore } from './frontier-store.ts';
import { cacheKey, type CacheKey, type HttpCacheReader } from './http-cache-reader.ts';
import type { ReextractSource } from './reextract-source.ts';
import type { SpecWriter } from './spec-writer.ts';

export interface DecodedJobEvent {
  readonly name: EventName;
  readonly value: EventMap[EventName];
}

/** The events the frontier decides on: its projection's canHandle (the others are never decoded). */
export const FRONTIER_EVENTS: readonly EventName[] = ['JobDispatched', 'PageFetched', 'PageFailed', 'JobCancelled', 'JobPaused', 'JobResumed'];

const HANDLED = new Set<EventName>(FRONTIER_EVENTS);

/** What the frontier reads from the log: every FrontierEvent but the clock's tick. */
type LoggedFrontierEvent = Exclude<FrontierEvent, DeadlineTick>;

export function toFrontierEvent(e: DecodedJobEvent): LoggedFrontierEvent | undefined {
  if (!HANDLED.has(e.name)) return undefined;
  return { type: e.name, data: e.value } as LoggedFrontierEvent;
}

/** Fetch ids that this batch's page events finish (those still outstanding before it). */
function finishingFetches(events: readonly FrontierEvent[], outstanding: FrontierState['outstanding']): Set<string> {
  const ids = new Set<string>();
  for (const e of events) {
    if ((e.type === 'PageFetched' || e.type === 'PageFailed') && Object.hasOwn(outstanding, e.data.fetch_id)) ids.add(e.data.fetch_id);
  }
  return ids;
}

export interface FrontierProcessorOptions {
  /**
   * Where specs are stored by hash: FetchRequested then carries `spec_hash` instead of the spec
   * (the service always gives one). Without it, FetchRequested carries its spec inline.
   */
  readonly specs?: SpecWriter;
  /**
   * Where each request's entry in its user's HTTP cache is looked up (FetchRequested.cached).
   * Without it, requests carry none.
   */
  readonly cache?: HttpCacheReader;
  /** Page URLs one job takes from sitemaps (TRAWL_SITEMAP_MAX_URLS); default the crawl library's. */
  readonly sitemapMaxUrls?: number;
  /**
   * Where a re-extraction's seeds and stored bodies are read (reextract-source.ts). Without it, a
   * re-extraction gets no seeds and fails NOTHING_TO_REEXTRACT.
   */
  readonly reextract?: ReextractSource;
}

/**
 * The cache keys of a batch's new requests: jobs with a user, not rendered in a browser (whose pages
 * the cache never keeps). A job bypassing the cache (ignore_cache) is looked up too: its worker
 * reuses nothing, but a page that has an entry gets the entry brought up to date with its body.
 */
function cacheKeys(decisions: readonly { decision: { state: FrontierState; emit: readonly FrontierEmit[] } }[]): CacheKey[] {
  const keys: CacheKey[] = [];
  for (const { decision } of decisions) {
    const { user_id: userId, spec } = decision.state;
    // A re-extraction's bodies are its source job's (reextractBodies), never the cache's latest.
    if (userId === null || !spec || spec.requires_browser || spec.reextract_of) continue;
    for (const e of decision.emit) if (e.type === 'FetchRequested') keys.push({ userId, url: e.data.url });
  }
  return keys;
}

export class FrontierProcessor {
  private readonly specs: SpecWriter | undefined;
  private readonly cache: HttpCacheReader | undefined;
  private readonly sitemapMaxUrls: number | undefined;
  private readonly reextract: ReextractSource | undefined;

  constructor(
    private readonly store: FrontierStore,
    private readonly producer: EventProducer,
    private readonly logger: Logger,
    options: FrontierProcessorOptions = {},
  ) {
    this.specs = options.specs;
    this.cache = options.cache;
    this.sitemapMaxUrls = options.sitemapMaxUrls;
    this.reextract = options.reextract;
  }

  /** `now`: the clock the decisions are stamped with (a job's deadline counts from its last move). */
  async apply(events: readonly DecodedJobEvent[], tx: PoolClient, now = Date.now()): Promise<{ emitted: number }> {
    const byJob = new Map<string, FrontierEvent[]>();
    for (const e of events) {
      const fe = toFrontierEvent(e);
      if (!fe) continue;
      const jobId = fe.data.job_id;
      let list = byJob.get(jobId);
      if (!list) byJob.set(jobId, (list = []));
      list.push(fe);
    }
    return this.decideAndProduce(byJob, tx, now);
  }

  /**
   * The deadline's tick for the given jobs, in `tx` like a batch: each job silent for `deadlineMs`
   * by `at` gets PageFailed FETCH_LOST for what it still waits for, and completes. The decider
   * re-checks each job from its locked state, so a job that moved meanwhile is left alone.
   */
  async expire(jobIds: readonly string[], tick: { at: number; deadlineMs: number }, tx: PoolClient): Promise<{ emitted: number }> {
    const event: DeadlineTick = { type: 'Tick', at: tick.at, deadlineMs: tick.deadlineMs };
    return this.decideAndProduce(new Map(jobIds.map((id) => [id, [event]])), tx, tick.at);
  }

  private async decideAndProduce(byJob: ReadonlyMap<string, FrontierEvent[]>, tx: PoolClient, now: number): Promise<{ emitted: number }> {
    if (byJob.size === 0) return { emitted: 0 };
    try {
      const states = await this.store.load(tx, [...byJob.keys()]);
      await this.withReextractSeeds(byJob, states);
      const decisions = [...byJob].map(([jobId, jobEvents]) => {
        const before = states.get(jobId)!;
        const outstandingBefore = before.state.outstanding;
        // Looked up before deciding: the decision updates this very state in place.
        const candidates = finishingFetches(jobEvents, outstandingBefore);
        // In place, not copied: a copy costs O(URLs seen) per batch, quadratic over a large job.
        // The cached state is given up here; the catch below drops it from the cache if this
        // batch does not commit.
        const decision = decideAll(before.state, jobEvents, { reuseState: true, now, ...(this.sitemapMaxUrls !== undefined ? { sitemapMaxUrls: this.sitemapMaxUrls } : {}) });
        // A cancel, a failure or a deadline replaces the outstanding map: whatever it still held is over too.
        if (decision.state.outstanding !== outstandingBefore) for (const id in outstandingBefore) candidates.add(id);
        const finished = [...candidates].filter((id) => !Object.hasOwn(decision.state.outstanding, id));
        return { before, decision, finished };
      });

      // 1. The specs the new requests name are stored (committed) first: a worker may read one at once.
      if (this.specs) await this.specs.ensure(decisions.flatMap(({ decision }) => decision.emit.flatMap((e) => (e.type === 'FetchRequested' && e.data.spec ? [e.data.spec] : []))));
      // 2. Each new request's entry in its user's HTTP cache (one query; none when it fails).
      const cached = this.cache ? await this.cache.lookup(cacheKeys(decisions)) : new Map<string, CachedPage>();
      //    A re-extraction's requests carry the bodies its source job stored (one query per source job).
      for (const [key, page] of await this.reextractBodies(decisions)) cached.set(key, page);
      // 3. Produce, and wait for every acknowledgement.
      const sends: Promise<string>[] = [];
      for (const { decision } of decisions) {
        const userId = decision.state.user_id;
        for (const e of decision.emit) sends.push(this.produce(e, e.type === 'FetchRequested' && userId !== null ? cached.get(cacheKey(userId, e.data.url)) : undefined));
      }
      await Promise.all(sends);

      // 4. Only then save the states (the caller commits them with the offsets).
      for (const { before, decision, finished } of decisions) {
        await this.store.save(tx, before, decision.state, decision.emit, finished, decision.queued);
        const lost = decision.emit.filter((e) => e.type === 'PageFailed');
        if (lost.length > 0) this.logger.warn({ job_id: decision.state.job_id, lost: lost.length, urls: lost.slice(0, 5).map((e) => e.data.url) }, 'fetches lost: no outcome by the deadline');
        const done = decision.emit.find((e) => e.type === 'JobCompleted' || e.type === 'JobFailed');
        if (done) this.logger.info({ job_id: decision.state.job_id, event: done.type, counters: decision.state.counters }, 'job ended');
      }
      return { emitted: sends.length };
    } catch (err) {
      // The cached states may have been changed in place by a batch that will roll back.
      this.store.forget(byJob.keys());
      throw err;
    }
  }

  /**
   * A re-extraction's dispatch gets its seeds, the source job's fetched pages, read here so that
   * the decision stays pure. Read only for a job not started yet: a redelivered dispatch is absorbed.
   */
  private async withReextractSeeds(byJob: ReadonlyMap<string, FrontierEvent[]>, states: Awaited<ReturnType<FrontierStore['load']>>): Promise<void> {
    if (!this.reextract) return;
    for (const [jobId, jobEvents] of byJob) {
      if (states.get(jobId)?.state.status !== 'new') continue;
      for (const [i, e] of jobEvents.entries()) {
        if (e.type !== 'JobDispatched' || !e.data.spec.reextract_of) continue;
        jobEvents[i] = { ...e, seeds: await this.reextract.seeds(e.data.spec.reextract_of) };
      }
    }
  }

  /** The stored bodies of the re-extractions' new requests, by cacheKey(user, url). */
  private async reextractBodies(decisions: readonly { decision: { state: FrontierState; emit: readonly FrontierEmit[] } }[]): Promise<Map<string, CachedPage>> {
    const out = new Map<string, CachedPage>();
    if (!this.reextract) return out;
    for (const { decision } of decisions) {
      const source = decision.state.spec?.reextract_of;
      if (!source || decision.state.user_id === null) continue;
      const urls = decision.emit.flatMap((e) => (e.type === 'FetchRequested' ? [e.data.url] : []));
      for (const [url, page] of await this.reextract.bodies(source, decision.state.user_id, urls)) out.set(cacheKey(decision.state.user_id, url), page);
    }
    return out;
  }

  private produce(e: FrontierEmit, cached: CachedPage | undefined): Promise<string> {
    const request = e.type === 'FetchRequested' && cached ? { ...e.data, cached } : e.data;
    const data = e.type === 'FetchRequested' && this.specs ? bySpecReference(withInlineSpec(request as typeof e.data)) : request;
    switch (e.type) {
      case 'FetchRequested':
        // Keyed by host: one host's fetches share a partition, so one worker owns its politeness.
        // A scrape's fetch too, though it is one page of its job: what it owes the host is what
        // every job's fetches share there (robots.txt Crawl-delay, a 429's pause, the operator's
        // TRAWL_HOST_MAX_CONCURRENCY), which is kept in the one worker that sees all of them; keyed
        // by job, N workers would each allow the cap and each space by the Crawl-delay. One host's
        // scrapes therefore load one worker (worker README, "Scrapes: one worker per host").
        return this.producer.emitEvent('FetchRequested', data as typeof e.data, { key: hostOf(e.data.url) });
      case 'PageFailed':
        return this.producer.emitEvent('PageFailed', e.data);
      case 'JobCompleted':
        return this.producer.emitEvent('JobCompleted', e.data);
      case 'JobFailed':
        return this.producer.emitEvent('JobFailed', e.data);
    }
  }
}
