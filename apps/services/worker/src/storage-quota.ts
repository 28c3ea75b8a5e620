/**
 * Whether a job's user may keep more page content: their `storage_bytes` quota against what their
 * jobs keep (@trawl/store storage-usage.ts, counted from the read model). The worker asks before it
 * writes a page's body or formats (page-content-store.ts); past the quota the page is fetched,
 * parsed and recorded all the same, without content, its PageFetched naming STORAGE_QUOTA_EXCEEDED.
 *
 * - Cheap: a job's owner is looked up once (the quota ledger, else the read model; an owner not
 *   known yet is asked again after a second, not a page later), a user's figure
 *   is kept `ttlMs` (TRAWL_WORKER_STORAGE_QUOTA_TTL_MS, 10 s) with one query in flight per user, so
 *   a crawl costs a query per user every few seconds, not one per page.
 * - Soft by what is in flight: a user can pass the quota by what their jobs store before the
 *   figure is read again and the read model has projected it (pages/s × that delay × page size);
 *   they are then refused until retention or a deletion brings them back under it.
 * - Fails open: a database that does not answer (or a job whose owner is not known yet) stores the
 *   page, as the worker did before quotas; a content store is not stopped for the read model.
 */
import { jobOwner, quotaLimitsOf, readStorageUsage, type Pool, type QuotaLimits } from '@trawl/store';
import { onceEvery, type Logger } from '@trawl/streams';

/** The code a PageFetched names when its content was not kept for the quota. */
export const STORAGE_QUOTA_EXCEEDED = 'STORAGE_QUOTA_EXCEEDED';

export interface StorageQuotaOptions {
  /** Every user's quotas unless `user_quotas` says otherwise (`TRAWL_QUOTA_*`). */
  readonly defaults: QuotaLimits;
  readonly logger: Pick<Logger, 'warn'>;
  /** How long a user's figure is trusted. */
  readonly ttlMs?: number;
  /** Job owners remembered at most. */
  readonly maxJobs?: number;
  readonly now?: () => number;
}

/** How soon a job whose owner is not known yet is asked again (the ledger row commits just after its JobDispatched). */
const UNKNOWN_OWNER_MS = 1_000;

interface Cached<T> {
  readonly at: number;
  readonly value: Promise<T>;
  /** How long the entry holds: the default while loading, then what its value says. */
  ttlMs: number;
}

export class StorageQuota {
  private readonly owners = new Map<string, Cached<string | undefined>>();
  private readonly users = new Map<string, Cached<boolean>>();
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly warn = onceEvery(60_000);

  constructor(
    private readonly pool: Pool,
    private readonly o: StorageQuotaOptions,
  ) {
    this.ttlMs = o.ttlMs ?? 10_000;
    this.now = o.now ?? Date.now;
  }

  /** False when the job's user has used up their storage quota. */
  async mayStore(jobId: string): Promise<boolean> {
    try {
      const user = await this.ownerOf(jobId);
      return user === undefined ? true : await this.userMayStore(user);
    } catch (err) {
      if (this.warn()) this.o.logger.warn({ err, job_id: jobId }, 'storage quota cannot be read: page content is stored meanwhile');
      return true;
    }
  }

  private ownerOf(jobId: string): Promise<string | undefined> {
    // A known owner never changes; an unknown one (not yet projected) is asked again after ttlMs.
    return this.cached(this.owners, jobId, () => jobOwner(this.pool, jobId), this.o.maxJobs ?? 10_000, (user) => (user === undefined ? UNKNOWN_OWNER_MS : Infinity));
  }

  private userMayStore(user: string): Promise<boolean> {
    return this.cached(this.users, user, async () => {
      const limit = (await quotaLimitsOf(this.pool, [user], this.o.defaults)).get(user)!.storage_bytes;
      const used = (await readStorageUsage(this.pool, [user])).get(user)!;
      return used < limit;
    }, 10_000);
  }

  /** The entry of `key`, loaded again once older than its ttl (`ttlOf` its value, else ttlMs); a failed load is not kept. */
  private cached<T>(map: Map<string, Cached<T>>, key: string, load: () => Promise<T>, max: number, ttlOf: (value: T) => number = () => this.ttlMs): Promise<T> {
    const hit = map.get(key);
    if (hit && this.now() - hit.at < hit.ttlMs) return hit.value;
    const entry: Cached<T> = { at: this.now(), value: load(), ttlMs: this.ttlMs };
    entry.value.then(
      (v) => (entry.ttlMs = ttlOf(v)),
      () => map.get(key) === entry && map.delete(key),
    );
    map.delete(key);
    map.set(key, entry);
    if (map.size > max) map.delete(map.keys().next().value!);
    return entry.value;
  }
}
