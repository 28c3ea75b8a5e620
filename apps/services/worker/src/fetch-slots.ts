/**
 * The worker's fetch slots and browser tabs, shared between jobs in turn.
 *
 * The consumer runs a partition's messages in offset order, and a partition carries many hosts'
 * fetches (they are keyed by host), so a job with thousands of slow hosts used to fill every slot
 * of a partition with its own fetches while another job's one fetch sat behind its whole backlog:
 * the slot count decided *how many* fetches ran, the log's order decided *whose*. Here the order
 * is decided between jobs:
 *
 * - The consumer hands the worker every fetch it accepts on a partition, up to `queuePerPartition`
 *   (TRAWL_WORKER_QUEUE, 1,000 by default: the consumer's own at-least-once window), instead of only
 *   as many as may run. They wait here, which costs a decoded event each, never a socket.
 * - A fetch runs when it holds a slot of its partition (`perPartition`, TRAWL_WORKER_CONCURRENCY:
 *   what the consumer's concurrency was) and one of the worker (`perWorker`,
 *   TRAWL_WORKER_MAX_CONCURRENCY: the consumer's former ceiling over all partitions). Each is shared
 *   by max-min fair shares between the users active there, and within a user between its jobs in
 *   turn (fair-shares.ts; the user is FetchRequested's `user_id`, a request without one is a tenant
 *   of its own): a user alone uses every slot; beside a user who runs 2 fetches at a time, a user
 *   with 10,000 fetches waiting, in one job or a hundred, holds at most the rest, so the small
 *   crawl's next fetch finds a slot free instead of waiting for one of the big crawl's slow fetches
 *   to end (or, before, for its whole backlog).
 * - A page rendered in Chromium takes a tab the same way (`browserTabs`, TRAWL_BROWSER_CONCURRENCY),
 *   so a user's many browser pages cannot queue ahead of another user's in the browser pool. The wait
 *   for a tab, like the wait for a slot or for a host's politeness, is not charged to the page's
 *   budget, which starts with the fetch itself.
 *
 * What the slot covers is the whole page: robots.txt, the host's politeness wait (deferred out of
 * the worker when long: HostBusyError), the fetch and the parse — what the consumer's slot covered.
 *
 * What it costs. The fetches waiting here count as running for the consumer: they hold their
 * partition's commit point as queued ones did, and a stopping worker gives them its drain time
 * (then abandons them, uncommitted) rather than dropping them at once.
 */
import type { PageFetcher } from '@trawl/crawl';
import { FairShares, type FairSharesOptions, type FairTurn } from './fair-shares.ts';

export interface FetchSlotsOptions {
  /** Fetches running at once per partition of trawl.fetch and of each retry tier (TRAWL_WORKER_CONCURRENCY). */
  readonly perPartition: number;
  /** Fetches running at once in the worker, all partitions together (TRAWL_WORKER_MAX_CONCURRENCY). */
  readonly perWorker: number;
  /** Pages rendering in Chromium at once: the browser pool's tabs (TRAWL_BROWSER_CONCURRENCY). */
  readonly browserTabs: number;
  /** Fetches of one partition the consumer hands over at once, running or waiting their turn (TRAWL_WORKER_QUEUE). */
  readonly queuePerPartition: number;
}

/** The part of the consumer's options that the slots decide. */
export interface ConsumerLimits {
  /** Messages of a partition handed to the handler at once. */
  readonly concurrency: number;
  /** …of all partitions: never the bound, so that no partition waits for another's backlog to be handed over. */
  readonly maxConcurrency: number;
  readonly maxBuffered: number;
}

/** Accepted, unfinished fetches over all partitions (the consumer's default). */
const MAX_BUFFERED = 10_000;

const positive = (env: NodeJS.ProcessEnv, name: string, dflt: number): number => {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return dflt;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${name} must be a whole number ≥ 1, got "${raw}"`);
  return n;
};

/** TRAWL_WORKER_CONCURRENCY (64), TRAWL_WORKER_MAX_CONCURRENCY (512), TRAWL_BROWSER_CONCURRENCY (2), TRAWL_WORKER_QUEUE (1,000, at least the first). */
export function fetchSlotsOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): FetchSlotsOptions {
  const perPartition = positive(env, 'TRAWL_WORKER_CONCURRENCY', 64);
  return {
    perPartition,
    perWorker: positive(env, 'TRAWL_WORKER_MAX_CONCURRENCY', 512),
    browserTabs: positive(env, 'TRAWL_BROWSER_CONCURRENCY', 2),
    queuePerPartition: Math.max(perPartition, positive(env, 'TRAWL_WORKER_QUEUE', 1_000)),
  };
}

/** What a fetch is, for its turn: its user and job, and the partition (topic and number) it was read from. */
export interface FetchTurn {
  readonly jobId: string;
  /** The job's user (FetchRequested's `user_id`); absent or null (a request written before it): the job is a tenant of its own. */
  readonly userId?: string | null;
  readonly partition: string;
  /** Aborting it while the fetch waits takes the fetch out of line (rejecting with its reason); also the page's signal, by which its browser render finds its job. */
  readonly signal?: AbortSignal;
}

export class FetchSlots {
  /** By partition; kept (a worker reads a few dozen), so that a job's claim survives a partition's idle moment. */
  private readonly partitions = new Map<string, FairShares>();
  private readonly worker: FairShares;
  private readonly tabs: FairShares;
  /** The user and job of each page being processed, by the page's signal (what reaches its fetcher and its parse). */
  private readonly turns = new WeakMap<AbortSignal, FairTurn>();

  constructor(
    readonly options: FetchSlotsOptions,
    private readonly shares: FairSharesOptions = {},
  ) {
    this.worker = new FairShares(options.perWorker, shares);
    this.tabs = new FairShares(options.browserTabs, shares);
  }

  /** The consumer's options that hand it every accepted fetch up to the queue (see the header). */
  consumerLimits(): ConsumerLimits {
    return { concurrency: this.options.queuePerPartition, maxConcurrency: MAX_BUFFERED, maxBuffered: MAX_BUFFERED };
  }

  /** Runs `work` once the fetch holds a slot of its partition and of the worker, in its user's and job's turn. */
  run<T>(turn: FetchTurn, work: () => Promise<T>): Promise<T> {
    const fair = tenantTurn(turn);
    if (turn.signal) this.turns.set(turn.signal, fair);
    return this.partitionSlots(turn.partition).run(fair, () => this.worker.run(fair, work, turn.signal), turn.signal);
  }

  /** The user and job of the page whose signal this is, while it is processed (its parse takes its turn by them). */
  turnOf(signal: AbortSignal | undefined): FairTurn | undefined {
    return signal ? this.turns.get(signal) : undefined;
  }

  /** `fetcher` (the browser) behind the tabs: a render starts once its job's turn gives it one. */
  tabbed(fetcher: PageFetcher): PageFetcher {
    return {
      fetch: (url, options) => {
        const turn = this.turnOf(options?.signal) ?? { tenant: '', job: '' };
        return this.tabs.run(turn, () => fetcher.fetch(url, options), options?.signal);
      },
    };
  }

  /** Fetches holding slots and waiting for one; renders in tabs and waiting for one (for gauges). */
  usage(): { fetching: number; waiting: number; rendering: number; waitingForTab: number } {
    let waiting = this.worker.queued;
    for (const slots of this.partitions.values()) waiting += slots.queued;
    return { fetching: this.worker.busy, waiting, rendering: this.tabs.busy, waitingForTab: this.tabs.queued };
  }

  private partitionSlots(partition: string): FairShares {
    let slots = this.partitions.get(partition);
    if (!slots) this.partitions.set(partition, (slots = new FairShares(this.options.perPartition, this.shares)));
    return slots;
  }
}

/** A fetch's tenant: its user, or, for a request that names none, its job alone. */
export function tenantTurn(turn: Pick<FetchTurn, 'jobId' | 'userId'>): FairTurn {
  return { tenant: turn.userId ? `user:${turn.userId}` : `job:${turn.jobId}`, job: turn.jobId };
}
