/**
 * `items.extracted`: a job's ItemExtracted events gathered for a short window into one delivery
 * per subscription. Each item's handler waits for the deliveries that carry it, so an item's offset
 * is committed only once its deliveries are done (or it goes to the next retry tier with them).
 *
 * A batch is fixed when it is first written: its row holds its item ids. A retried or re-read item
 * finds the row that holds it and waits on that row's attempt (one attempt for the whole batch,
 * however many of its items arrive), instead of forming a new batch; a row's id is a UUIDv5 of its
 * webhook and its sorted item ids. Items of one job that arrive while a batch is being written
 * start the next one.
 */
import { uuidv5, type ConsumedEventOf } from '@trawl/streams';
import type { EventMap } from '@trawl/schemas';
import type { DeliveryStore, JobOwner, NewDelivery } from './delivery-store.ts';
import type { AttemptPlan, DeliveryRunner, Outcome } from './delivery-runner.ts';
import { deliveryBody, itemData } from './event-payload.ts';

interface Waiting {
  readonly item: EventMap['ItemExtracted'];
  readonly plan: AttemptPlan;
  readonly bytes: number;
  resolve(outcome: Outcome): void;
  reject(err: unknown): void;
}

interface OpenBatch {
  readonly jobId: string;
  readonly items: Waiting[];
  bytes: number;
  timer: NodeJS.Timeout;
}

export interface ItemBatcherOptions {
  readonly windowMs: number;
  readonly maxItems: number;
  readonly maxBytes: number;
}

export class ItemBatcher {
  private readonly open = new Map<string, OpenBatch>();

  constructor(
    private readonly store: DeliveryStore,
    private readonly runner: DeliveryRunner,
    private readonly ownerOf: (jobId: string, type: 'items.extracted') => Promise<JobOwner | undefined>,
    private readonly options: ItemBatcherOptions,
  ) {}

  /** Resolves with the worst outcome among the deliveries that carry this item ('delivered' when none matches). */
  add(event: ConsumedEventOf<'ItemExtracted'>, plan: AttemptPlan): Promise<Outcome> {
    return new Promise<Outcome>((resolve, reject) => {
      const item = event.value;
      const bytes = JSON.stringify(item.fields).length + item.url.length + 200;
      let batch = this.open.get(item.job_id);
      if (batch && (batch.items.length >= this.options.maxItems || batch.bytes + bytes > this.options.maxBytes)) {
        this.close(batch);
        batch = undefined;
      }
      if (!batch) {
        const b: OpenBatch = { jobId: item.job_id, items: [], bytes: 0, timer: setTimeout(() => this.close(b), this.options.windowMs) };
        this.open.set(item.job_id, b);
        batch = b;
      }
      batch.items.push({ item, plan, bytes, resolve, reject });
      batch.bytes += bytes;
    });
  }

  /** Flushes what is open now (shutdown: their handlers end instead of waiting out the window). */
  flushAll(): void {
    for (const b of [...this.open.values()]) this.close(b);
  }

  private close(batch: OpenBatch): void {
    clearTimeout(batch.timer);
    if (this.open.get(batch.jobId) === batch) this.open.delete(batch.jobId);
    this.flush(batch).then(
      (outcomes) => batch.items.forEach((w, i) => w.resolve(outcomes[i]!)),
      (err: unknown) => batch.items.forEach((w) => w.reject(err)),
    );
  }

  private async flush(batch: OpenBatch): Promise<Outcome[]> {
    const first = batch.items[0]!;
    const owner = await this.ownerOf(batch.jobId, 'items.extracted');
    if (!owner) return batch.items.map(() => 'delivered');
    const subs = await this.store.subscriptions(owner, 'items.extracted', batch.jobId, new Date(first.item.occurred_at));
    if (subs.length === 0) return batch.items.map(() => 'delivered');
    const itemIds = batch.items.map((w) => w.item.event_id);
    const existing = await this.store.itemDeliveries(subs.map((s) => s.id), itemIds);
    // Per item, the rows that carry it: the existing ones, and one new row per webhook for the rest.
    const rowsOf = new Map<string, Set<string>>(itemIds.map((id) => [id, new Set<string>()]));
    const fresh: NewDelivery[] = [];
    for (const sub of subs) {
      const covered = new Set<string>();
      for (const row of existing.filter((r) => r.webhook_id === sub.id)) {
        for (const id of row.item_ids) {
          if (rowsOf.has(id)) {
            rowsOf.get(id)!.add(row.id);
            covered.add(id);
          }
        }
      }
      const rest = batch.items.filter((w) => !covered.has(w.item.event_id));
      if (rest.length === 0) continue;
      const ids = rest.map((w) => w.item.event_id).sort();
      const eventId = uuidv5(`items.extracted\u0000${ids.join(',')}`);
      const id = uuidv5(`${sub.id}\u0000${eventId}`);
      const createdAt = new Date(rest[0]!.item.occurred_at);
      fresh.push({
        id,
        webhookId: sub.id,
        eventId,
        type: 'items.extracted',
        jobId: batch.jobId,
        sourceOffset: null,
        itemIds: ids,
        body: deliveryBody(eventId, 'items.extracted', createdAt, batch.jobId, { count: rest.length, items: rest.map((w) => itemData(w.item)) }),
      });
      for (const itemId of ids) rowsOf.get(itemId)!.add(id);
    }
    await this.store.ensure(fresh);
    // Every row is attempted with the plan of its latest-tier item: the items of a batch travel the tiers together.
    const plan = batch.items.reduce((p, w) => (w.plan.nextAt === null || (p.nextAt !== null && w.plan.nextAt > p.nextAt) ? w.plan : p), first.plan);
    const rowIds = [...new Set([...rowsOf.values()].flatMap((s) => [...s]))];
    const outcomes = new Map(await Promise.all(rowIds.map(async (id) => [id, await this.runner.deliver(id, plan)] as const)));
    return itemIds.map((itemId) => worst([...rowsOf.get(itemId)!].map((id) => outcomes.get(id)!)));
  }
}

/**
 * pending before held before failed before delivered: a pending row keeps its items going through
 * the tiers; held rows (their owner's budget spent) park them until the latest of their times.
 */
export function worst(outcomes: readonly Outcome[]): Outcome {
  if (outcomes.includes('pending')) return 'pending';
  const held = outcomes.filter((o) => typeof o === 'object');
  if (held.length > 0) return { heldUntil: Math.max(...held.map((o) => o.heldUntil)) };
  if (outcomes.includes('failed')) return 'failed';
  return 'delivered';
}
