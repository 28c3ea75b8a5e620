/**
 * One attempt at one delivery row, shared by whoever asks for it at the same time (the items of a
 * batch all wait on their batch's row; a job event's retry and a re-read may meet).
 *
 * Order. A job event's delivery is not attempted while an earlier event of the same job has an
 * unfinished delivery to the same webhook: it waits ("pending", its source event goes to the next
 * retry tier, which is due after the earlier one's). So a receiver that was down gets a job's events
 * in log order once it is back — started before completed — and never a later one first.
 *
 * A delivery that succeeds releases the next one waiting behind it at once, rather than leaving it
 * to its own retry tier: after an outage a job's later events follow its first within moments,
 * not one tier (up to hours, with the default tiers) later. The source event's message still
 * comes through its tier and finds the row delivered.
 *
 * Budget. Each attempt at an event's delivery first takes a unit of its owner's hourly delivery
 * budget (delivery-budget.ts); while it is spent the delivery is held (`{ heldUntil }`: its event
 * is parked until then, no attempt counted), and so is one waiting behind an earlier event of its
 * job — which would otherwise spend tiers for as long as the budget stays spent. A delivery held
 * past `holdMaxMs` fails with that reason. Tests and re-deliveries (`once`) are limited at the API.
 */
import type { Logger } from '@trawl/streams';
import { openWebhookSecret, type SecretBox } from '@trawl/store/secrets';
import type { DeliveryStore, DeliveryToSend } from './delivery-store.ts';
import type { HttpSender } from './http-sender.ts';
import { counterIn, defaultMetrics } from '@trawl/streams';
import type { DeliveryBudget, Hold } from './delivery-budget.ts';

/**
 * `pending`: not delivered yet, a later try is due (or the source event will be dead-lettered).
 * `{ heldUntil }`: not tried, its owner's delivery budget is spent; its event comes back then (epoch ms).
 */
export type Outcome = 'delivered' | 'failed' | 'pending' | { readonly heldUntil: number };

export interface AttemptPlan {
  /** When the source event's next try is due; null when this was its last tier. */
  readonly nextAt: Date | null;
  /** Send even if an earlier delivery of the job is unfinished (re-deliveries and tests asked by a user). */
  readonly ignoreOrder?: boolean;
  /** A failure is final (re-deliveries and tests: one attempt). */
  readonly once?: boolean;
}

export class DeliveryRunner {
  private readonly running = new Map<string, Promise<Outcome>>();
  private readonly heldCount = counterIn(defaultMetrics, 'trawl_webhook_deliveries_held_total', "Deliveries not attempted because their owner's hourly delivery budget was spent: held (tried again as the hour frees room) or given up (held past TRAWL_WEBHOOK_HOLD_MAX_MS).", ['outcome']);

  constructor(
    private readonly store: DeliveryStore,
    private readonly sender: HttpSender,
    private readonly logger: Logger,
    /** Opens the webhook's sealed secret (TRAWL_SECRETS_KEY) just before signing; it is kept nowhere else in clear. */
    private readonly secrets: SecretBox,
    private readonly budget: Pick<DeliveryBudget, 'take' | 'resumeAt'>,
    /** How long a delivery may be held by its owner's budget before it is given up. */
    private readonly holdMaxMs: number,
  ) {}

  /** The outcome of this delivery; joins an attempt already running for it. */
  deliver(id: string, plan: AttemptPlan): Promise<Outcome> {
    let p = this.running.get(id);
    if (!p) {
      p = this.attempt(id, plan).finally(() => this.running.delete(id));
      this.running.set(id, p);
    }
    return p;
  }

  private async attempt(id: string, plan: AttemptPlan): Promise<Outcome> {
    const d = await this.store.load(id);
    if (!d) return 'failed';
    if (d.status === 'delivered') return 'delivered';
    if (d.status === 'failed' && !plan.once) return 'failed';
    if (!d.usable || !d.url || !d.secret) {
      await this.store.notYet(id, 'the webhook was deleted or deactivated', { attempted: false, nextAt: null, final: true });
      return 'failed';
    }
    const unit = plan.once ? undefined : await this.budget.take(d.user_id);
    if (unit && 'until' in unit) return this.hold(d, unit);
    if (!plan.ignoreOrder && d.blocked_by) {
      unit?.giveBack();
      await this.store.notYet(id, `waiting for delivery ${d.blocked_by} (an earlier event of this job)`, { attempted: false, nextAt: plan.nextAt });
      return 'pending';
    }
    return this.send(d, plan);
  }

  /** Not tried: the owner's budget is spent. Marked held (its next try when the hour frees room), or given up once held too long. */
  private async hold(d: DeliveryToSend, hold: Hold): Promise<Outcome> {
    const budget = `the delivery budget of this webhook's owner (webhook_deliveries_per_hour, ${hold.limit})`;
    if (Date.now() - d.created_at.getTime() > this.holdMaxMs) {
      this.heldCount.inc({ outcome: 'given_up' });
      this.logger.warn({ delivery: d.id, webhook: d.webhook_id, user: d.user_id, type: d.type, heldMs: Date.now() - d.created_at.getTime() }, 'webhook delivery given up: its owner\'s delivery budget stayed spent');
      await this.store.notYet(d.id, `not sent: ${budget} stayed spent for ${Math.round(this.holdMaxMs / 60_000)} min`, { attempted: false, nextAt: null, final: true });
      return 'failed';
    }
    const heldUntil = this.budget.resumeAt(d.user_id);
    this.heldCount.inc({ outcome: 'held' });
    await this.store.notYet(d.id, `held: ${budget} is spent; sent as the hour frees room`, { attempted: false, nextAt: new Date(heldUntil) });
    return { heldUntil };
  }

  /** Attempts the delivery that waited behind one just delivered, keeping the try its tier planned; not awaited by the caller. */
  private release(next: { id: string; next_attempt_at: Date | null }): void {
    void this.deliver(next.id, { nextAt: next.next_attempt_at })
      .catch((err: unknown) => this.logger.warn({ err, delivery: next.id }, 'could not release a waiting delivery; its retry tier will'));
  }

  private async send(d: DeliveryToSend, plan: AttemptPlan): Promise<Outcome> {
    let secret: string;
    try {
      secret = openWebhookSecret(this.secrets, d.webhook_id, d.secret!);
    } catch (err) {
      // One subscription whose secret will not open (a key not configured, a row written by an
      // older version) fails alone: the event's other deliveries keep their retries.
      this.logger.error({ err, delivery: d.id, webhook: d.webhook_id }, 'webhook secret cannot be opened: delivery failed');
      await this.store.notYet(d.id, 'the webhook secret cannot be opened with the configured keys', { attempted: false, nextAt: null, final: true });
      return 'failed';
    }
    const result = await this.sender.send({ url: d.url!, secret, eventId: d.event_id, type: d.type, deliveryId: d.id, body: JSON.stringify(d.body) });
    if (result.ok) {
      const next = await this.store.delivered(d.id, result.status);
      if (next && !plan.ignoreOrder) this.release(next);
      return 'delivered';
    }
    const final = Boolean(result.refused || plan.once);
    this.logger.info({ delivery: d.id, webhook: d.webhook_id, type: d.type, error: result.error, ...(result.egress ? { egress: result.egress } : {}), final }, 'webhook delivery failed');
    await this.store.notYet(d.id, result.error ?? 'failed', { attempted: true, ...(result.status === undefined ? {} : { status: result.status }), nextAt: final ? null : plan.nextAt, final });
    return final ? 'failed' : 'pending';
  }
}
