import type { CrawlSpec, FetchRequested, JobCancelled, JobCompleted, JobDispatched, JobFailed, JobOutcome, JobPaused, JobResumed, PageFailed, PageFetched } from '@trawl/schemas';
import { InvalidSpecError, MissingParamError } from '../errors.ts';
import { renderUrl } from '../params/param-template.ts';
import { compileRules, hostOf, type CrawlRules } from '../rules/crawl-rules.ts';
import { fetchId, normaliseUrlOrNull } from '../url/normalise.ts';
import { DEFAULT_SITEMAP_LIMITS } from '../sitemap/sitemap-limits.ts';
import { needsBrowser } from '../fetch/browser-work.ts';
import { jobEventId } from './event-ids.ts';
import { FETCH_LOST, type FrontierCounters, type FrontierState, type FrontierStatus, type OutstandingFetch, type QueuedFetch } from './frontier-state.ts';

/**
 * The clock, read at the edge: by `at` (epoch ms), a running job that has not moved for `deadlineMs`
 * has lost whatever it still waits for. The edge ticks only once it has applied every page event
 * the log held at `at` (apps/services/frontier: log-clock.ts), so a real outcome is never declared lost.
 */
export interface DeadlineTick {
  readonly type: 'Tick';
  readonly at: number;
  readonly deadlineMs: number;
}

/**
 * A page of the job a re-extraction parses again (CrawlSpec.reextract_of): its normalised URL and
 * the depth it had there. The edge reads them from the source job's fetched pages and hands them
 * over with the JobDispatched, so that the decision stays a function of its input.
 */
export interface ReextractSeed {
  readonly url: string;
  readonly depth: number;
}

/** What the frontier reacts to. */
export type FrontierEvent =
  | { readonly type: 'JobDispatched'; readonly data: JobDispatched; readonly seeds?: readonly ReextractSeed[] }
  | { readonly type: 'PageFetched'; readonly data: PageFetched }
  | { readonly type: 'PageFailed'; readonly data: PageFailed }
  | { readonly type: 'JobCancelled'; readonly data: JobCancelled }
  | { readonly type: 'JobPaused'; readonly data: JobPaused }
  | { readonly type: 'JobResumed'; readonly data: JobResumed }
  | DeadlineTick;

/** What the frontier asks to be produced, complete with deterministic ids, in this order. */
export type FrontierEmit =
  | { readonly type: 'FetchRequested'; readonly data: FetchRequested }
  | { readonly type: 'PageFailed'; readonly data: PageFailed }
  | { readonly type: 'JobCompleted'; readonly data: JobCompleted }
  | { readonly type: 'JobFailed'; readonly data: JobFailed };

export interface Decision {
  readonly state: FrontierState;
  readonly emit: readonly FrontierEmit[];
  /** Fetches this decision held back (the job is paused): the edge stores them with the state. */
  readonly queued: readonly (QueuedFetch & { readonly fetch_id: string })[];
}

/**
 * The frontier of one job as a pure function: (state, event) → (state, events to produce). No I/O,
 * no clock: emitted events take `occurred_at` and `causation_id` from the event that caused them and
 * ids from what identifies them, so running the same events again after a crash emits byte-identical
 * events (the wiring produces them first, then commits state and offsets: invariant 3).
 *
 * The completion rule: a job completes when, after handling an event, no fetch it requested is
 * without a PageFetched/PageFailed. New requests are counted outstanding in the same step that emits
 * them, so "the workers finished what they had" can never look like "the job is done". Terminal
 * states absorb everything after them, so JobCompleted is emitted exactly once.
 *
 * The deadline rule: a Tick finds a running job that has not moved for its deadline and fails every
 * fetch it still waits for with a PageFailed `FETCH_LOST` of its own (ids from the fetch, time from
 * the deadline), then completes it by the rule above. A real outcome arriving after that finds the
 * job terminal and changes nothing, so the job still completes exactly once.
 *
 * The pause rule: a paused job requests nothing. Outcomes of fetches requested before the pause
 * still count (and the links they bring are decided as ever), but what they would request is
 * queued; JobResumed requests the queue. A paused job is never ticked, so no fetch is declared lost
 * while it waits, and its deadline counts from the resume. Queued fetches count in urls_seen, so a
 * paused job with a queue never looks complete.
 */
export function decide(state: FrontierState, event: FrontierEvent, options: DecideOptions = {}): Decision {
  return decideAll(state, [event], options);
}

export interface DecideOptions {
  /**
   * The edge's clock (epoch ms) as it decides: a job's deadline counts from the last decision that
   * moved it. Default: the deciding event's `occurred_at`, what deciding from the log alone gives.
   */
  readonly now?: number;
  /**
   * Update the given state in place instead of copying its maps. The caller gives the input state up
   * (it must not be read again: on a failed produce, reload the stored state instead). Copying is
   * O(URLs seen) per call, which makes one-event-at-a-time deciding quadratic on a large job.
   */
  readonly reuseState?: boolean;
  /** Page URLs one job takes from sitemaps, all its site roots together (TRAWL_SITEMAP_MAX_URLS). */
  readonly sitemapMaxUrls?: number;
}

/**
 * Several events at once (a consumer batch). By default the state's maps are copied once per call
 * and then updated in place, and the input state is left unchanged; see {@link DecideOptions.reuseState}.
 */
export function decideAll(state: FrontierState, events: readonly FrontierEvent[], options: DecideOptions = {}): Decision {
  const s: Working = options.reuseState
    ? (state as Working)
    : {
        ...state,
        seen: { ...state.seen },
        outstanding: { ...state.outstanding },
        queued: { ...state.queued },
        counters: { ...state.counters },
      };
  const emit: FrontierEmit[] = [];
  const queued: Queued[] = [];
  s.queuedNow = queued;
  for (const e of events) {
    switch (e.type) {
      case 'JobDispatched':
        onDispatched(s, e.data, options.now ?? e.data.occurred_at.getTime(), emit, e.seeds);
        break;
      case 'PageFetched':
        onPageDone(s, e.data, e.data, options.now ?? e.data.occurred_at.getTime(), emit, options.sitemapMaxUrls ?? DEFAULT_SITEMAP_LIMITS.maxUrls);
        break;
      case 'PageFailed':
        onPageDone(s, e.data, null, options.now ?? e.data.occurred_at.getTime(), emit, 0);
        break;
      case 'JobCancelled':
        onCancelled(s, e.data, emit);
        break;
      case 'JobPaused':
        onPaused(s);
        break;
      case 'JobResumed':
        onResumed(s, e.data, options.now ?? e.data.occurred_at.getTime(), emit);
        break;
      case 'Tick':
        onTick(s, e, emit);
        break;
    }
  }
  delete s.queuedNow;
  return { state: s, emit, queued: queued.filter((q) => Object.hasOwn(s.queued, q.fetch_id)) };
}

type Queued = QueuedFetch & { readonly fetch_id: string };

type Working = {
  -readonly [K in Exclude<keyof FrontierState, 'seen' | 'outstanding' | 'queued' | 'counters'>]: FrontierState[K];
} & {
  seen: Record<string, true>;
  outstanding: Record<string, OutstandingFetch>;
  queued: Record<string, QueuedFetch>;
  counters: { -readonly [K in keyof FrontierCounters]: number };
  /** This call's newly queued fetches (not part of the stored state). */
  queuedNow?: Queued[];
};

interface Cause {
  readonly event_id: string;
  readonly occurred_at: Date;
}

function onDispatched(s: Working, e: JobDispatched, now: number, emit: FrontierEmit[], reextractSeeds: readonly ReextractSeed[] | undefined): void {
  if (s.status !== 'new') return; // a redelivered dispatch, or a job cancelled before it started
  s.spec = e.spec;
  s.user_id = e.user_id ?? null;
  s.params = e.params ?? {};
  s.started_at = e.occurred_at.getTime();
  s.dispatch_event_id = e.event_id;
  s.active_at = now;
  let rules: CrawlRules;
  try {
    rules = rulesFor(s.job_id, e.spec);
  } catch (err) {
    if (!(err instanceof InvalidSpecError)) throw err;
    fail(s, e, 'INVALID_SPEC', err.message, emit);
    return;
  }
  if (e.spec.reextract_of) {
    seedReextraction(s, e, rules, reextractSeeds ?? [], emit);
    return;
  }
  const templates = e.start_urls.length > 0 ? e.start_urls : [e.search_url];
  let seeds: string[];
  try {
    seeds = templates.map((t) => renderUrl(t, s.params));
  } catch (err) {
    if (!(err instanceof MissingParamError)) throw err;
    fail(s, e, 'MISSING_PARAM', err.message, emit);
    return;
  }
  s.status = 'running';
  const before = s.counters.urls_seen;
  for (const raw of seeds) {
    const url = normaliseUrlOrNull(raw);
    if (url === null || rules.checkTrap(url) !== null) continue;
    request(s, url, 0, null, e, emit);
  }
  if (s.counters.urls_seen === before) fail(s, e, 'ALL_SEEDS_REFUSED', `every start URL was refused: ${seeds.slice(0, 5).join(', ')}`, emit);
}

/**
 * A re-extraction requests the source job's fetched pages, each at the depth it had there, and
 * nothing else: its start URLs are only what the job view shows. Its seeds are the source job's
 * pages, so max_pages and the trap rules still bound them; none left fails the job, saying why.
 */
function seedReextraction(s: Working, e: JobDispatched, rules: CrawlRules, seeds: readonly ReextractSeed[], emit: FrontierEmit[]): void {
  s.status = 'running';
  for (const seed of seeds) {
    const url = normaliseUrlOrNull(seed.url);
    if (url === null || rules.checkTrap(url) !== null) continue;
    request(s, url, seed.depth, null, e, emit);
  }
  if (s.counters.urls_seen === 0) fail(s, e, 'NOTHING_TO_REEXTRACT', `job ${e.spec.reextract_of} has no fetched page to extract again`, emit);
}

/** PageFailed.error_code of a failed login (the crawl's LoginFailedError): it fails the job LOGIN_FAILED. */
const LOGIN_FAILED_PAGE = 'TRAWL_LOGIN_FAILED';

function onPageDone(s: Working, e: PageFetched | PageFailed, fetched: PageFetched | null, now: number, emit: FrontierEmit[], sitemapMaxUrls: number): void {
  if (s.status !== 'running') return; // after cancel/completion (a FETCH_LOST included), or before dispatch: nothing to do
  const done = s.outstanding[e.fetch_id];
  if (done === undefined) return; // duplicate delivery, or a fetch this job never asked for
  delete s.outstanding[e.fetch_id];
  if (s.active_at === null || now > s.active_at) s.active_at = now;
  if (fetched) {
    s.counters.pages_fetched++;
    s.counters.items_extracted += fetched.item_count;
    if (s.spec!.reextract_of) {
      // A re-extraction parses the pages it was given and follows nothing: a duplicate is counted,
      // its canonical page is among the source's pages or was never fetched.
      if (fetched.canonical_url) s.counters.duplicates = (s.counters.duplicates ?? 0) + 1;
    } else {
      followCanonical(s, fetched, done, emit);
      followLinks(s, fetched, done, emit);
      followSitemaps(s, fetched, done, emit, sitemapMaxUrls);
    }
  } else {
    s.counters.pages_failed++;
    // A session's login failed: every page behind it would fail alike, so the job ends here, saying why.
    if ((e as PageFailed).error_code === LOGIN_FAILED_PAGE) {
      fail(s, e, 'LOGIN_FAILED', (e as PageFailed).error_message, emit);
      return;
    }
  }
  maybeComplete(s, e, 'finished', emit);
}

/**
 * A duplicate page (the worker found its rel=canonical and withheld its items, parse-page.ts
 * duplicateOf) is counted, and its canonical URL requested in its stead, at the page's own depth
 * (the same content, not a hop further), whatever the sitemap mode, first of the page's URLs so
 * that max_pages leaves it room before the links. Already seen, the canonical page gives (or gave)
 * the items itself. The seen set makes it once per job however many variants name it.
 */
function followCanonical(s: Working, e: PageFetched, done: OutstandingFetch, emit: FrontierEmit[]): void {
  if (!e.canonical_url) return;
  s.counters.duplicates = (s.counters.duplicates ?? 0) + 1;
  const url = normaliseUrlOrNull(e.canonical_url);
  if (url === null || Object.hasOwn(s.seen, url)) return;
  const rules = rulesFor(s.job_id, s.spec!);
  if (rules.checkTrap(url) !== null || !rules.isHostAllowed(hostOf(url), hostOf(done.url))) return;
  request(s, url, done.depth, done.url, e, emit);
}

function followLinks(s: Working, e: PageFetched, done: OutstandingFetch, emit: FrontierEmit[]): void {
  const spec = s.spec!;
  // `only`: the start URLs and their sitemaps' URLs, no link and no next page followed.
  if (spec.sitemap === 'only') return;
  const rules = rulesFor(s.job_id, spec);
  const pageUrl = done.url;
  if (e.next_page) {
    const next = normaliseUrlOrNull(e.next_page);
    if (next !== null && rules.checkTrap(next) === null && rules.isHostAllowed(hostOf(next), hostOf(pageUrl))) {
      request(s, next, done.depth, pageUrl, e, emit);
    }
  }
  const depth = done.depth + 1;
  if (depth > spec.max_depth) return;
  for (const link of e.links) {
    if (!hasRoom(s)) return;
    const url = normaliseUrlOrNull(link);
    if (url === null || Object.hasOwn(s.seen, url)) continue;
    // The worker applied the include/exclude patterns (PageFetched.links are the links they kept);
    // running them again here would let one job's patterns spend the frontier's time, which every
    // job on its partition shares. The trap and host rules are cheap and bound what is requested.
    if (rules.checkTrap(url) !== null || !rules.isHostAllowed(hostOf(url), hostOf(pageUrl))) continue;
    request(s, url, depth, pageUrl, e, emit);
  }
}

/**
 * The URLs a site's sitemaps list (a start URL that is the site's root): requested at depth 1 like
 * the root's links, but whatever max_depth says — the site lists them as its pages, nothing was
 * followed to find them — and their own links follow the depth rule. The worker kept them by the
 * crawl rules; the trap and host rules are checked again as for links. max_pages and the per-job
 * sitemap limit bound them; dedupe is the seen set, shared with links.
 */
function followSitemaps(s: Working, e: PageFetched, done: OutstandingFetch, emit: FrontierEmit[], maxUrls: number): void {
  const spec = s.spec!;
  const urls = e.sitemap_urls ?? [];
  if (urls.length === 0 || spec.sitemap === 'skip') return;
  const rules = rulesFor(s.job_id, spec);
  const pageHost = hostOf(done.url);
  for (const raw of urls) {
    if (!hasRoom(s) || (s.counters.sitemap_urls ?? 0) >= maxUrls) return;
    const url = normaliseUrlOrNull(raw);
    if (url === null || Object.hasOwn(s.seen, url)) continue;
    if (rules.checkTrap(url) !== null || !rules.isHostAllowed(hostOf(url), pageHost)) continue;
    s.counters.sitemap_urls = (s.counters.sitemap_urls ?? 0) + 1;
    request(s, url, done.depth + 1, done.url, e, emit);
  }
}

function onCancelled(s: Working, e: JobCancelled, emit: FrontierEmit[]): void {
  if (s.status !== 'new' && s.status !== 'running') return;
  if (s.started_at === null) s.started_at = e.occurred_at.getTime();
  s.outstanding = {};
  s.queued = {};
  complete(s, e, 'cancelled', 'cancelled', emit);
}

function onPaused(s: Working): void {
  // A job paused before its dispatch is read starts paused: its seeds are queued.
  if (s.status !== 'new' && s.status !== 'running') return;
  s.paused = true;
}

function onResumed(s: Working, e: JobResumed, now: number, emit: FrontierEmit[]): void {
  if (!s.paused || (s.status !== 'new' && s.status !== 'running')) return;
  s.paused = false;
  if (s.status !== 'running') return;
  // The deadline counts from here: the pause was no silence of the workers'.
  if (s.active_at === null || now > s.active_at) s.active_at = now;
  const held = s.queued;
  s.queued = {};
  for (const id of Object.keys(held).sort()) {
    const q = held[id]!;
    s.outstanding[id] = { url: q.url, depth: q.depth };
    emit.push(fetchRequested(s, id, q.url, q.depth, q.referrer, e));
  }
}

function onTick(s: Working, tick: DeadlineTick, emit: FrontierEmit[]): void {
  if (s.status !== 'running' || s.active_at === null || s.paused) return;
  const due = s.active_at + tick.deadlineMs;
  if (due > tick.at) return;
  // Everything here follows from the stored state, so a frontier that crashes after producing and
  // ticks again emits the same events, byte for byte.
  const occurred_at = new Date(due);
  const renderMode = needsBrowser(s.spec!) ? 'browser' : 'http';
  const message = `no outcome within ${tick.deadlineMs} ms of the job's last progress: the fetch was lost`;
  let cause: Cause = { event_id: s.dispatch_event_id!, occurred_at };
  for (const id of Object.keys(s.outstanding).sort()) {
    const lost = s.outstanding[id]!;
    const event_id = jobEventId({ jobId: s.job_id, kind: 'FetchLost', key: id });
    emit.push({
      type: 'PageFailed',
      data: {
        event_id,
        occurred_at,
        causation_id: jobEventId({ jobId: s.job_id, kind: 'FetchRequested', key: id }),
        job_id: s.job_id,
        fetch_id: id,
        url: lost.url,
        depth: lost.depth,
        status: null,
        error_code: FETCH_LOST,
        error_message: message,
        attempts: 0,
        render_mode: renderMode,
      },
    });
    s.counters.pages_failed++;
    cause = { event_id, occurred_at };
  }
  s.outstanding = {};
  maybeComplete(s, cause, 'finished', emit);
}

/**
 * Request `url` unless already seen or over max_pages (max_pages ≤ 0 means no page limit: depth
 * bounds the job); while paused, queue it instead.
 */
function request(s: Working, url: string, depth: number, referrer: string | null, cause: Cause, emit: FrontierEmit[]): void {
  if (Object.hasOwn(s.seen, url) || !hasRoom(s)) return;
  const id = fetchId(s.job_id, url);
  s.seen[url] = true;
  s.counters.urls_seen++;
  if (s.paused) {
    s.queued[id] = { url, depth, referrer };
    s.queuedNow?.push({ fetch_id: id, url, depth, referrer });
    return;
  }
  s.outstanding[id] = { url, depth };
  emit.push(fetchRequested(s, id, url, depth, referrer, cause));
}

function fetchRequested(s: Working, id: string, url: string, depth: number, referrer: string | null, cause: Cause): FrontierEmit {
  return {
    type: 'FetchRequested',
    data: {
      event_id: jobEventId({ jobId: s.job_id, kind: 'FetchRequested', key: id }),
      occurred_at: cause.occurred_at,
      causation_id: cause.event_id,
      job_id: s.job_id,
      fetch_id: id,
      url,
      depth,
      referrer,
      spec: s.spec!,
      // Inline here; the frontier service puts it on the wire by reference (bySpecReference).
      spec_hash: null,
      params: s.params,
      // Filled by the frontier service from its user's HTTP cache as the request goes out (http-cache-reader.ts).
      cached: null,
      // The worker shares its slots and parse threads between users, then between a user's jobs.
      user_id: s.user_id,
    },
  };
}

function hasRoom(s: Working): boolean {
  const max = s.spec!.max_pages;
  return max <= 0 || s.counters.urls_seen < max;
}

function maybeComplete(s: Working, cause: Cause, outcome: JobOutcome, emit: FrontierEmit[]): void {
  // While running, every requested URL is outstanding until its PageFetched/PageFailed, so the
  // counters say whether anything is left. (Enumerating `outstanding` instead costs O(keys) on a
  // dictionary-mode object: a third of the frontier's CPU per page at 100,000 pages.)
  if (s.counters.urls_seen > s.counters.pages_fetched + s.counters.pages_failed) return;
  complete(s, cause, outcome, 'completed', emit);
}

function complete(s: Working, cause: Cause, outcome: JobOutcome, status: FrontierStatus, emit: FrontierEmit[]): void {
  s.status = status;
  emit.push({
    type: 'JobCompleted',
    data: {
      event_id: jobEventId({ jobId: s.job_id, kind: 'JobCompleted' }),
      occurred_at: cause.occurred_at,
      causation_id: cause.event_id,
      job_id: s.job_id,
      outcome,
      pages_fetched: s.counters.pages_fetched,
      pages_failed: s.counters.pages_failed,
      items_extracted: s.counters.items_extracted,
      urls_seen: s.counters.urls_seen,
      started_at: new Date(s.started_at!),
    },
  });
}

function fail(s: Working, cause: Cause, code: string, reason: string, emit: FrontierEmit[]): void {
  s.status = 'failed';
  s.outstanding = {};
  s.queued = {};
  emit.push({
    type: 'JobFailed',
    data: {
      event_id: jobEventId({ jobId: s.job_id, kind: 'JobFailed' }),
      occurred_at: cause.occurred_at,
      causation_id: cause.event_id,
      job_id: s.job_id,
      error_code: code,
      reason,
      pages_fetched: s.counters.pages_fetched,
      pages_failed: s.counters.pages_failed,
    },
  });
}

/**
 * Compiled rules per job, memoised outside the state (regexes are not JSON). Invisible to callers:
 * the same spec always compiles to the same rules. Bounded to the jobs a frontier is likely to hold.
 */
const compiled = new Map<string, { spec: CrawlSpec; key: string; rules: CrawlRules }>();
const MAX_COMPILED = 1_000;

function rulesFor(jobId: string, spec: CrawlSpec): CrawlRules {
  const hit = compiled.get(jobId);
  if (hit && (hit.spec === spec || hit.key === JSON.stringify(spec))) return hit.rules;
  const rules = compileRules(spec);
  if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
  compiled.set(jobId, { spec, key: JSON.stringify(spec), rules });
  return rules;
}
