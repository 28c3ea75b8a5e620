/**
 * The live feed hub: one Kafka subscription per API instance, fanned out to this instance's
 * WebSocket clients, each seeing only its own user's events.
 *
 * Who owns a job? CrawlRequested, JobDispatched, TargetDue and JobCancelled carry the user id and
 * fill an owner cache; for any other event of a job not in the cache (the API restarted mid-job,
 * or the cache evicted it) the owner is read from Postgres (read model, then api_jobs). The lookup
 * is awaited inside the subscription's handler, which streams runs one message at a time, so a
 * job's events are delivered in log order even when one of them waits for a lookup.
 */
import type { Logger } from 'pino';

/** Only warnings are logged here; Fastify's logger and pino both fit. */
type WarnLogger = Pick<Logger, 'warn'>;
import { feedMessage, type FeedEvent } from './feed-event.ts';
import type { FeedClient } from './feed-client.ts';

export interface LiveFeedOptions {
  readonly lookupOwner: (jobId: string) => Promise<string | null>;
  readonly logger: WarnLogger;
  /** Jobs whose owner is remembered (oldest forgotten first). */
  readonly maxOwners?: number;
  /** How long "no owner known" is remembered before asking Postgres again. */
  readonly unknownOwnerTtlMs?: number;
}

const ANNOUNCES_OWNER = new Set(['CrawlRequested', 'JobDispatched', 'TargetDue', 'JobCancelled']);

export class LiveFeed {
  private readonly byUser = new Map<string, Set<FeedClient>>();
  private readonly owners = new Map<string, string>();
  private readonly unknown = new Map<string, number>();
  private readonly maxOwners: number;
  private readonly unknownTtl: number;
  private clients = 0;

  constructor(private readonly options: LiveFeedOptions) {
    this.maxOwners = options.maxOwners ?? 100_000;
    this.unknownTtl = options.unknownOwnerTtlMs ?? 2_000;
  }

  get clientCount(): number {
    return this.clients;
  }

  /** Registers a client; returns its removal. */
  add(client: FeedClient): () => void {
    let set = this.byUser.get(client.userId);
    if (!set) this.byUser.set(client.userId, (set = new Set()));
    set.add(client);
    this.clients++;
    return () => {
      if (!set.delete(client)) return;
      this.clients--;
      if (set.size === 0) this.byUser.delete(client.userId);
    };
  }

  /** Handles one event from the subscription. Never throws: a feed problem must not stop the feed. */
  async handle(event: FeedEvent): Promise<void> {
    const jobId = (event.value as { job_id?: unknown }).job_id;
    if (typeof jobId !== 'string') return;
    try {
      const announced = ANNOUNCES_OWNER.has(event.name) ? (event.value as { user_id?: string | null }).user_id : null;
      if (announced) this.remember(jobId, announced);
      if (this.clients === 0) return;
      const owner = announced ?? (await this.ownerOf(jobId));
      if (!owner) return;
      const clients = this.byUser.get(owner);
      if (!clients) return;
      let message: string | undefined;
      for (const client of clients) {
        if (!client.wants(event.name, jobId)) continue;
        message ??= feedMessage(event, jobId);
        client.send(message);
      }
    } catch (err) {
      this.options.logger.warn({ err, job_id: jobId, event: event.name }, 'live feed could not deliver an event');
    }
  }

  private remember(jobId: string, userId: string): void {
    this.unknown.delete(jobId);
    if (this.owners.has(jobId)) return;
    if (this.owners.size >= this.maxOwners) this.owners.delete(this.owners.keys().next().value!);
    this.owners.set(jobId, userId);
  }

  private async ownerOf(jobId: string): Promise<string | null> {
    const known = this.owners.get(jobId);
    if (known) return known;
    const until = this.unknown.get(jobId);
    if (until !== undefined && until > Date.now()) return null;
    const owner = await this.options.lookupOwner(jobId);
    if (owner) this.remember(jobId, owner);
    else {
      if (this.unknown.size >= 10_000) this.unknown.clear();
      this.unknown.set(jobId, Date.now() + this.unknownTtl);
    }
    return owner;
  }
}
