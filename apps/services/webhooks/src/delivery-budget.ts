/**
 * The per-user delivery budget (`webhook_deliveries_per_hour`, issue 32 item 5). Every event fans
 * out to every subscription of its owner, so one user's events could keep the shared service
 * busy and make it an amplifier against an outside URL. Every attempt at a delivery of a user's
 * events — a first try or a retry — takes one unit of their hour (`webhook_usage.deliveries`, by
 * the minute: @trawl/store hourly-window.ts). Past the limit their deliveries are **held, not
 * lost**: the runner marks the row (`retrying`, `last_error: held: …`, `next_attempt_at` when the
 * hour frees room) and the service parks the source event in a retry tier until then
 * (DeferredError: the same attempt, no tier spent, no attempt counted). Other users' deliveries do
 * not wait: a held event costs a consumer slot nothing. Tests and re-deliveries (asked through
 * the API) are not counted here: they have their own hourly limit there.
 *
 * Several instances. Units are reserved in Postgres under the user's lock, a lease at a time (1%
 * of the limit, 1 to 100 units, good for LEASE_MS), so a busy user costs a transaction a lease,
 * not one a delivery; what a lease did not use goes back when it ends. Whatever the number of
 * instances, a user's reservations — so what is sent — never pass the limit in any hour counted by
 * the minute. The approximation runs the other way: units leased by another instance count as used
 * until its lease ends (≤ 5 s), so a user may be held up to (instances − 1) × lease units early, and
 * an instance that dies holding a lease leaves its units counted until their minute leaves the hour.
 *
 * When a held delivery comes back. Not all at the moment room returns — a backlog of thousands
 * would be read again every minute for the few that fit — but spread at the rate the hour refills
 * (one slot every hour / limit per user, from that moment on), so each held event is read about
 * once more per refill. A delivery held longer than `holdMaxMs` (24 h) is given up with its reason:
 * a user whose events outrun their budget for good cannot grow the retry tiers without bound.
 */
import { giveBackDeliveries, HOURLY_WINDOW_MS, reserveDeliveries, webhookQuotaLimitsOf, type DeliveryGiveBack, type Pool, type WebhookQuotaLimits } from '@trawl/store';
import type { Logger } from '@trawl/streams';

/** How long a lease's units may be spent before what is left goes back. */
const LEASE_MS = 5_000;
/** How long a spent budget is believed before Postgres is asked again (another instance may give units back). */
const RECHECK_MS = 5_000;
/** How long a user's limit (their override) is kept. */
const LIMITS_MS = 60_000;
/** Reservations in flight at once (each holds a pool connection for its transaction). */
const MAX_RESERVING = 4;

/** Units one reservation asks for: about 1% of the hour, 1 to 100. */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.min(100, Math.floor(limit / 100)));
}

/** A user's budget is spent: nothing of theirs goes before `until` (epoch ms). */
export interface Hold {
  readonly until: number;
  readonly limit: number;
}

/** One unit taken; `giveBack` returns it unspent (the delivery could not go for another reason). */
export interface Unit {
  giveBack(): void;
}

interface Lease {
  readonly minute: Date;
  readonly granted: number;
  used: number;
  readonly endsAt: number;
}

export class DeliveryBudget {
  private readonly leases = new Map<string, Lease>();
  private readonly held = new Map<string, Hold & { readonly recheckAt: number }>();
  private readonly reserving = new Map<string, Promise<void>>();
  private readonly limits = new Map<string, { readonly at: number; readonly limit: number }>();
  private readonly slots = new Map<string, number>();
  private readonly unreturned: DeliveryGiveBack[] = [];
  private readonly queue: (() => void)[] = [];
  private inFlight = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly pool: Pool,
    private readonly defaults: WebhookQuotaLimits,
    private readonly logger: Logger,
  ) {
    this.sweeper = setInterval(() => void this.sweep(), LEASE_MS);
    this.sweeper.unref();
  }

  /** Takes one unit of the user's hour, or says until when their deliveries wait. */
  async take(userId: string): Promise<Unit | Hold> {
    for (;;) {
      const lease = this.leases.get(userId);
      if (lease && lease.used < lease.granted && Date.now() < lease.endsAt) {
        lease.used++;
        return {
          giveBack: () => {
            if (this.leases.get(userId) === lease && lease.used > 0) lease.used--;
          },
        };
      }
      const hold = this.held.get(userId);
      if (hold && Date.now() < hold.recheckAt) return hold;
      // Each round either leases at least one unit (for this call or a concurrent one) or finds the hour spent.
      await this.reserve(userId);
    }
  }

  /**
   * When a held event of the user's should be read again: the moment their hour has room, then
   * one slot later for each event held after it (the rate the hour refills).
   */
  resumeAt(userId: string): number {
    const now = Date.now();
    const hold = this.held.get(userId);
    const slot = Math.max(now, hold?.until ?? now + RECHECK_MS, this.slots.get(userId) ?? 0);
    this.slots.set(userId, slot + HOURLY_WINDOW_MS / Math.max(1, hold?.limit ?? 1));
    return slot;
  }

  /** Gives back what every lease has left. */
  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.reserving.values()]);
    for (const [userId, lease] of this.leases) this.unreturned.push({ userId, minute: lease.minute, units: lease.granted - lease.used });
    this.leases.clear();
    await this.giveBack();
  }

  private reserve(userId: string): Promise<void> {
    let p = this.reserving.get(userId);
    if (!p) {
      p = this.gated(() => this.reserveNow(userId)).finally(() => this.reserving.delete(userId));
      this.reserving.set(userId, p);
    }
    return p;
  }

  private async reserveNow(userId: string): Promise<void> {
    const limit = await this.limitOf(userId);
    const old = this.leases.get(userId);
    this.leases.delete(userId);
    const giveBack = old && old.granted > old.used ? { userId, minute: old.minute, units: old.granted - old.used } : undefined;
    let r;
    try {
      r = await reserveDeliveries(this.pool, userId, limit, leaseSize(limit), giveBack);
    } catch (err) {
      if (giveBack) this.unreturned.push(giveBack);
      throw err;
    }
    const now = Date.now();
    if (r.granted > 0) {
      this.leases.set(userId, { minute: r.minute, granted: r.granted, used: 0, endsAt: now + LEASE_MS });
      this.held.delete(userId);
      return;
    }
    const until = now + Math.max(0, r.roomAt - r.now);
    this.held.set(userId, { until, limit, recheckAt: Math.max(now + 100, Math.min(until, now + RECHECK_MS)) });
  }

  private async limitOf(userId: string): Promise<number> {
    const hit = this.limits.get(userId);
    if (hit && Date.now() - hit.at < LIMITS_MS) return hit.limit;
    let limit = this.defaults.webhook_deliveries_per_hour;
    try {
      limit = (await webhookQuotaLimitsOf(this.pool, [userId], this.defaults)).get(userId)!.webhook_deliveries_per_hour;
    } catch (err) {
      // A database whose configuration model was never migrated (this service alone): no overrides.
      const code = (err as { code?: string }).code;
      if (code !== '42P01' && code !== '42703') throw err;
    }
    if (this.limits.size > 10_000) this.limits.clear();
    this.limits.set(userId, { at: Date.now(), limit });
    return limit;
  }

  private async gated<T>(work: () => Promise<T>): Promise<T> {
    if (this.inFlight >= MAX_RESERVING) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.inFlight++;
    try {
      return await work();
    } finally {
      this.inFlight--;
      this.queue.shift()?.();
    }
  }

  /** Ends the leases past their time (what they left goes back) and forgets what no longer matters. */
  private async sweep(): Promise<void> {
    const now = Date.now();
    for (const [userId, lease] of this.leases) {
      if (now < lease.endsAt || this.reserving.has(userId)) continue;
      this.leases.delete(userId);
      this.unreturned.push({ userId, minute: lease.minute, units: lease.granted - lease.used });
    }
    for (const [userId, hold] of this.held) if (hold.until < now - RECHECK_MS) this.held.delete(userId);
    for (const [userId, slot] of this.slots) if (slot < now) this.slots.delete(userId);
    for (const [userId, hit] of this.limits) if (now - hit.at >= LIMITS_MS) this.limits.delete(userId);
    await this.giveBack();
  }

  private async giveBack(): Promise<void> {
    const back = this.unreturned.splice(0).filter((b) => b.units > 0);
    try {
      await giveBackDeliveries(this.pool, back);
    } catch (err) {
      // Not given back, they count until their minute leaves the hour: the budget errs on the safe side.
      this.logger.warn({ err, users: back.length }, 'could not give back unused webhook delivery units');
    }
  }
}
