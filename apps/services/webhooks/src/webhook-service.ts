/**
 * The webhooks service: one more consumer group (`trawl-webhooks`) on trawl.jobs, trawl.pages and
 * trawl.items. It also decides change tracking's PageChanged (change-detector.ts): a PageFetched of
 * a schedule's run whose content differs from the previous finished run's becomes a PageChanged on
 * trawl.pages, which this same consumer then delivers as `page.changed`.
 *
 * A source event becomes one delivery row per matching subscription (ids: UUIDv5 of the webhook
 * and the event, so a re-read finds its rows instead of making new ones); the handler attempts the
 * rows not yet delivered and resolves when every one is done. When one is not, it throws a
 * retriable error: the runtime forwards the event to the next retry tier (`trawl.webhooks.retry.n`,
 * TRAWL_WEBHOOK_RETRY_DELAYS_MS), where only its undelivered rows are attempted again, and after the
 * last tier to `trawl.webhooks.dlq`, whose hook marks the rows `failed`. A slow or dead receiver
 * therefore holds one handler slot for at most one attempt's timeout, never its partition.
 *
 * At-least-once: a row is marked delivered after the receiver's 2xx, so a crash between the two
 * sends it again, with the same body `id` (`Idempotency-Key`) for the receiver to de-duplicate.
 *
 * Re-deliveries and tests asked through the API are rows in state `requested`, polled here and
 * sent once (no tiers: the user asked for one attempt and sees its outcome in the deliveries).
 *
 * Each user's event deliveries are bounded by their hourly delivery budget (delivery-budget.ts):
 * past it, an event whose deliveries are held is parked in a retry tier until the hour frees room
 * (DeferredError: the same attempt, nothing lost), while other users' events go on.
 */
import { PageChangeDetector } from '@trawl/changes';
import {
  consumerGroup,
  createKafka,
  DeferredError,
  EventProducer,
  RetriableError,
  runEventConsumer,
  TOPICS,
  uuidv5,
  webhookRetryTiers,
  type ConsumedEvent,
  type DeadLetter,
  type EventConsumer,
  type Logger,
  type RetryTier,
} from '@trawl/streams';
import type { AddressPolicy } from '@trawl/crawl';
import type { EventMap } from '@trawl/schemas';
import type { Pool, WebhookEventType } from '@trawl/store';
import { secretBoxFromEnv, type SecretBox } from '@trawl/store/secrets';
import { emitPageChange } from './change-detector.ts';
import { purgeWebhookUsage, webhookQuotasFromEnv, type WebhookQuotaLimits } from '@trawl/store';
import { DeliveryBudget } from './delivery-budget.ts';
import { DEFAULT_HOLD_MAX_MS, DEFAULT_WEBHOOK_CONFIG, type WebhookConfig } from './config.ts';
import { DeliveryRunner, type AttemptPlan, type Outcome } from './delivery-runner.ts';
import { DeliveryStore, type JobOwner } from './delivery-store.ts';
import { deliveryBody, isJobEvent, jobWebhookEvent, pageChangedEvent, type JobWebhookEvent } from './event-payload.ts';
import { HttpSender } from './http-sender.ts';
import { ItemBatcher, worst } from './item-batcher.ts';

export interface WebhookServiceOptions {
  readonly logger: Logger;
  readonly pool: Pool;
  readonly config?: WebhookConfig;
  /**
   * Tests give their own topics, tiers and group; the service uses the catalogue's. Without `pages`
   * (a test of job and item deliveries alone) no change is tracked.
   */
  readonly topics?: { readonly jobs: string; readonly items: string; readonly pages?: string };
  readonly retryTiers?: readonly RetryTier[];
  readonly deadLetterTopic?: string;
  readonly groupId?: string;
  readonly kafka?: Parameters<typeof runEventConsumer>[0]['kafka'];
  /** What deliveries may reach: main.ts passes the policy it checked at start; default TRAWL_FETCH_ALLOW as is. */
  readonly egress?: AddressPolicy;
  /** Opens the sealed webhook secrets; default: the keys of TRAWL_SECRETS_KEY (environment, else stack.env). */
  readonly secrets?: SecretBox;
  /** Every user's webhook limits unless `user_quotas` says otherwise; default `TRAWL_QUOTA_WEBHOOK*`. */
  readonly quotas?: WebhookQuotaLimits;
}

export interface WebhookService {
  readonly consumer: EventConsumer;
  stop(): Promise<void>;
}

const OWNER_CACHE_MS = 60_000;
const MANUAL_STALE_MS = 120_000;
/** How often `webhook_usage` is cleared of minutes long out of the hour (any instance may). */
const USAGE_PURGE_MS = 600_000;

export async function startWebhookService(o: WebhookServiceOptions): Promise<WebhookService> {
  const config = o.config ?? DEFAULT_WEBHOOK_CONFIG;
  const tiers = o.retryTiers ?? webhookRetryTiers();
  const store = new DeliveryStore(o.pool);
  const sender = new HttpSender(config.timeoutMs, o.egress);
  const budget = new DeliveryBudget(o.pool, o.quotas ?? webhookQuotasFromEnv(), o.logger);
  const runner = new DeliveryRunner(store, sender, o.logger, o.secrets ?? secretBoxFromEnv(process.env, 'the webhooks service'), budget, config.holdMaxMs ?? DEFAULT_HOLD_MAX_MS);
  const detector = new PageChangeDetector(o.pool);
  // Writes PageChanged, and (shared with the consumer) its retry forwards and dead letters.
  const kafka = o.kafka ?? createKafka({ clientId: 'trawl-webhooks', logger: o.logger });
  const producer = new EventProducer({ kafka, logger: o.logger });
  await producer.connect();

  // Owners are cached once known (null: the job has none); an unknown one is asked again next time.
  const owners = new Map<string, { readonly at: number; readonly owner: JobOwner | null }>();
  const anySubscription = new Map<string, { readonly at: number; readonly any: Promise<boolean> }>();
  const ownerOf = async (jobId: string, type: WebhookEventType): Promise<JobOwner | undefined> => {
    const hit = owners.get(jobId);
    if (hit && Date.now() - hit.at < OWNER_CACHE_MS) return hit.owner ?? undefined;
    const owner = await store.jobOwner(jobId);
    if (owner !== undefined) {
      if (owners.size > 10_000) owners.clear();
      owners.set(jobId, { at: Date.now(), owner });
      return owner ?? undefined;
    }
    // Not known yet: this event was read before the job's JobDispatched (the two topics are read
    // side by side, and a restart re-reads both). It is tried again later, through the retry
    // tiers — unless nobody subscribes to this type at all, when it cannot matter.
    let probe = anySubscription.get(type);
    if (!probe || Date.now() - probe.at > 1_000) {
      probe = { at: Date.now(), any: store.anySubscription(type) };
      anySubscription.set(type, probe);
    }
    if (await probe.any) throw new RetriableError(`the owner of job ${jobId} is not known yet (its JobDispatched not read yet)`);
    return undefined;
  };
  const items = new ItemBatcher(store, runner, ownerOf, { windowMs: config.itemsWindowMs, maxItems: config.itemsMax, maxBytes: config.itemsMaxBytes });

  const planFor = (attempt: number): AttemptPlan => {
    const tier = tiers[attempt - 1];
    return { nextAt: tier ? new Date(Date.now() + tier.delayMs) : null };
  };

  // A job's events are handled one after another, in the order the runtime starts them (offset
  // order within the partition), so the earlier event's rows exist when the later one checks them.
  const chains = new Map<string, Promise<unknown>>();
  const inJobOrder = <T>(jobId: string, work: () => Promise<T>): Promise<T> => {
    const prev = chains.get(jobId) ?? Promise.resolve();
    const next = prev.catch(() => undefined).then(work);
    chains.set(jobId, next);
    void next.catch(() => undefined).finally(() => chains.get(jobId) === next && chains.delete(jobId));
    return next;
  };

  /**
   * One delivery row per matching subscription, then an attempt at each. `sourceOffset` orders a
   * job's events on trawl.jobs; `page.changed` (another topic) is not ordered against them.
   */
  async function deliverEvent(w: JobWebhookEvent, owner: JobOwner, sourceOffset: string | null, attempt: number): Promise<Outcome> {
    const subs = await store.subscriptions(owner, w.type, w.jobId, w.occurredAt);
    const ids = await store.ensureForEvent(w.eventId, subs.map((s) => ({
      id: uuidv5(`${s.id}\u0000${w.eventId}`),
      webhookId: s.id,
      eventId: w.eventId,
      type: w.type,
      jobId: w.jobId,
      sourceOffset,
      itemIds: null,
      body: deliveryBody(w.eventId, w.type, w.occurredAt, w.jobId, w.data),
    })));
    const plan = planFor(attempt);
    return worst(await Promise.all(ids.map((id) => runner.deliver(id, plan))));
  }

  async function handleJobEvent(event: ConsumedEvent): Promise<Outcome> {
    if (!isJobEvent(event)) return 'delivered';
    const w = jobWebhookEvent(event);
    if (event.name === 'JobDispatched') await store.rememberJob(w.jobId, event.value.user_id, event.value.schedule_id);
    const owner = event.name === 'JobDispatched' ? (event.value.user_id ? { user_id: event.value.user_id, schedule_id: event.value.schedule_id } : undefined) : await ownerOf(w.jobId, w.type);
    if (!owner) return 'delivered';
    return deliverEvent(w, owner, event.origin.offset, event.attempt);
  }

  async function handlePageChanged(event: ConsumedEvent & { name: 'PageChanged' }): Promise<Outcome> {
    const w = pageChangedEvent(event.value);
    const owner = await ownerOf(w.jobId, w.type);
    if (!owner) return 'delivered';
    return deliverEvent(w, owner, null, event.attempt);
  }

  async function handle(event: ConsumedEvent): Promise<void> {
    let outcome: Outcome;
    try {
      if (event.name === 'ItemExtracted') outcome = await items.add(event, planFor(event.attempt));
      else if (event.name === 'PageChanged') outcome = await handlePageChanged(event);
      else if (isJobEvent(event)) outcome = await inJobOrder(event.value.job_id, () => handleJobEvent(event));
      else if (event.name === 'PageFetched' && topics.pages) {
        await emitPageChange(detector, producer, event.value, topics.pages);
        return;
      } else return;
    } catch (err) {
      o.logger.warn({ err, event: event.name, event_id: event.value.event_id, attempt: event.attempt }, 'webhook handling failed; the event goes to its next try');
      throw err;
    }
    if (outcome === 'pending') throw new RetriableError(`${event.name} ${event.value.event_id}: a webhook delivery is not done yet (attempt ${event.attempt})`);
    if (typeof outcome === 'object') throw new DeferredError(`${event.name} ${event.value.event_id}: held, its owner's webhook delivery budget is spent`, outcome.heldUntil);
  }

  async function onDeadLetter(dl: DeadLetter): Promise<void> {
    const e = dl.event;
    if (!e) return;
    if (e.name === 'PageFetched') {
      const v = e.value as EventMap['PageFetched'];
      o.logger.warn({ event_id: v.event_id, job_id: v.job_id, url: v.url, reason: dl.reason }, 'a page change was never decided: the previous run never settled in the read models');
      return;
    }
    const reason = `dead-lettered (${dl.reason}) after ${dl.attempts} attempts`;
    const n = e.name === 'ItemExtracted' ? await store.deadLettered({ itemId: e.value.event_id }, reason) : await store.deadLettered({ eventId: e.value.event_id }, reason);
    if (n > 0) o.logger.warn({ event: e.name, event_id: e.value.event_id, deliveries: n, reason: dl.reason }, 'webhook deliveries dead-lettered');
  }

  const topics = o.topics ?? { jobs: TOPICS.jobs, items: TOPICS.items, pages: TOPICS.pages };
  const consumer = await runEventConsumer({
    name: 'webhooks',
    groupId: o.groupId ?? consumerGroup('trawl-webhooks'),
    topics: [topics.jobs, topics.items, ...(topics.pages ? [topics.pages] : [])],
    producer,
    retryTiers: tiers,
    deadLetterTopic: o.deadLetterTopic ?? TOPICS.webhooksDlq,
    keyOrdering: false,
    // Items wait in a batch for its window: room for a window's items of every job of a partition.
    concurrency: 1_000,
    maxConcurrency: 6_000,
    maxUncommittedPerPartition: 2_000,
    pool: o.pool,
    logger: o.logger,
    kafka,
    onDeadLetter,
    handler: handle,
  }).catch(async (err: unknown) => {
    await producer.disconnect().catch(() => undefined);
    throw err;
  });

  let polling: Promise<void> = Promise.resolve();
  const poll = setInterval(() => {
    polling = polling.then(async () => {
      try {
        const ids = await store.claimRequested(20, MANUAL_STALE_MS);
        await Promise.all(ids.map((id) => runner.deliver(id, { nextAt: null, ignoreOrder: true, once: true })));
      } catch (err) {
        o.logger.warn({ err }, 'could not send requested webhook deliveries');
      }
    });
  }, config.pollMs);

  const purge = setInterval(() => {
    purgeWebhookUsage(o.pool).catch((err: unknown) => o.logger.warn({ err }, 'could not purge old webhook usage'));
  }, USAGE_PURGE_MS);
  purge.unref();

  return {
    consumer,
    async stop() {
      clearInterval(poll);
      clearInterval(purge);
      items.flushAll();
      await Promise.all([consumer.stop(), polling]);
      await budget.stop();
      await producer.disconnect();
      await sender.close();
    },
  };
}
