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
 */
import type { Logger } from '@trawl/streams';
import type { DeliveryStore, DeliveryToSend } from './delivery-store.ts';
import type { HttpSender } from './http-sender.ts';

/** `pending`: not delivered yet, a later try is due (or the source event will be dead-lettered). */
export type Outcome = 'delivered' | 'failed' | 'pending';

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

  constructor(
    private readonly store: DeliveryStore,
    private readonly sender: HttpSender,
    private readonly logger: Logger,
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
    if (!plan.ignoreOrder && d.blocked_by) {
      await this.store.notYet(id, `waiting for delivery ${d.blocked_by} (an earlier event of this job)`, { attempted: false, nextAt: plan.nextAt });
      return 'pending';
    }
    return this.send(d, plan);
  }

  /** Attempts the delivery that waited behind one just delivered, keeping the try its tier planned; not awaited by the caller. */
  private release(next: { id: string; next_attempt_at: Date | null }): void {
    void this.deliver(next.id, { nextAt: next.next_attempt_at })
      .catch((err: unknown) => this.logger.warn({ err, delivery: next.id }, 'could not release a waiting delivery; its retry tier will'));
  }

  private async send(d: DeliveryToSend, plan: AttemptPlan): Promise<Outcome> {
    const result = await this.sender.send({ url: d.url!, secret: d.secret!, eventId: d.event_id, type: d.type, deliveryId: d.id, body: JSON.stringify(d.body) });
    if (result.ok) {
      const next = await this.store.delivered(d.id, result.status);
      if (next && !plan.ignoreOrder) this.release(next);
      return 'delivered';
    }
    const final = Boolean(result.refused || plan.once);
    this.logger.info({ delivery: d.id, webhook: d.webhook_id, type: d.type, error: result.error, final }, 'webhook delivery failed');
    await this.store.notYet(d.id, result.error ?? 'failed', { attempted: true, ...(result.status === undefined ? {} : { status: result.status }), nextAt: final ? null : plan.nextAt, final });
    return final ? 'failed' : 'pending';
  }
}
