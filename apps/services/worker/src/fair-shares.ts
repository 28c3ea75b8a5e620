/**
 * A fixed number of slots shared between users by max-min fair shares, and within a user between
 * its jobs in turn: the worker's fetch slots and browser tabs (fetch-slots.ts) and its parse
 * threads (parse/parse-pool.ts).
 *
 * Handing a freed slot to the waiting job with the fewest running is not enough when one job's work
 * is slow and another's fast: a crawl's next fetch comes a frontier round trip after its last one
 * ended, by which time its slot went to the other job's backlog, so each of its fetches waited for
 * one of the slow ones to end — with 64 slots held by fetches that hang 30 s, half a second each.
 * And shares per job let a user with many jobs take as many shares. So each user (tenant) gets a
 * share, recomputed at every hand-out:
 *
 * - A tenant's demand is the most it has had running and waiting at once since it became active. It
 *   stays active while it has work running or waiting, and for `holdMs` after (a crawl between two
 *   fetches is still crawling).
 * - Shares are max-min fair over the active tenants' demands (water-filling): a tenant asking for
 *   less than an equal split gets what it asks, the rest is split between the others. A tenant alone
 *   gets every slot; nothing is reserved for tenants not seen.
 * - A tenant starts work while it runs fewer than its share (rounded up) and a slot is free; among
 *   tenants that may, the one with the fewest running, then the one served least recently. Within
 *   the tenant, its job with the fewest running goes first, then the one served least recently: a
 *   job with 10,000 pages waiting and another job of the same user with one take turns.
 *
 * So a user with 10,000 slow fetches in any number of jobs, beside a user who runs 2 at a time,
 * holds at most `slots − 2`: the other user's next fetch finds its slot free.
 *
 * Work that turns out slow can give its slot back while it goes on (`lease.detach()`: a parse past
 * its first 250 ms), up to `maxDetached` pieces at once: it then no longer holds a slot the others
 * take turns on, its tenant's demand shrinks by it (else its share would keep a slot idle), and
 * among tenants that may start, one with work stepped aside comes after one without as much running.
 *
 * What it costs: slots kept for a tenant that does not come back stay idle for `holdMs`, and a large
 * tenant keeps its claim (at most an equal split) as long.
 */

export interface FairSharesOptions {
  /** How long a tenant with nothing running or waiting keeps its claim. */
  readonly holdMs?: number;
  /** Work that may have given its slot back (`lease.detach()`) at once, all tenants together; 0: none. */
  readonly maxDetached?: number;
  readonly now?: () => number;
}

/** A crawl's next fetch comes one frontier round trip (consume, decide, produce, consume) after its last. */
export const DEFAULT_HOLD_MS = 2_000;

/** Whose work it is: shares go to tenants (users), and within a tenant round its jobs. */
export interface FairTurn {
  readonly tenant: string;
  readonly job: string;
}

export interface SlotLease {
  /** Frees this work's slot while it goes on running; false when `maxDetached` are detached already (the slot stays held). */
  detach(): boolean;
}

interface Waiter {
  readonly start: () => void;
  readonly onAbort: () => void;
}

interface JobLine {
  /** Running, detached or not. */
  running: number;
  readonly waiting: Waiter[];
  servedAt: number;
}

interface TenantState {
  /** Holding a slot. */
  running: number;
  /** Started and stepped aside (holding no slot). */
  detached: number;
  waiting: number;
  /** Most running + waiting at once since the tenant became active: its demand. */
  peak: number;
  /** When it last had nothing running, detached or waiting; null while it has. */
  idleSince: number | null;
  /** Hand-outs so far when it was last served (least recently served first among equals). */
  servedAt: number;
  readonly jobs: Map<string, JobLine>;
}

export class FairShares {
  private readonly tenants = new Map<string, TenantState>();
  private running = 0;
  private detached = 0;
  private handedOut = 0;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  private readonly holdMs: number;
  private readonly maxDetached: number;
  private readonly now: () => number;

  constructor(
    readonly slots: number,
    options: FairSharesOptions = {},
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new RangeError(`slots must be a positive whole number, not ${slots}`);
    this.holdMs = options.holdMs ?? DEFAULT_HOLD_MS;
    this.maxDetached = options.maxDetached ?? 0;
    this.now = options.now ?? Date.now;
  }

  /** Work started and not ended, holding a slot or stepped aside. */
  get busy(): number {
    return this.running + this.detached;
  }

  /** Work waiting for a slot, all tenants together. */
  get queued(): number {
    let n = 0;
    for (const s of this.tenants.values()) n += s.waiting;
    return n;
  }

  /** Each active tenant's share now (for tests and gauges). */
  shares(): Map<string, number> {
    const byState = this.computeShares();
    return new Map([...this.tenants].map(([tenant, s]) => [tenant, byState.get(s)!]));
  }

  /**
   * Runs `work` once its tenant may take a slot and it is its job's turn; the slot is freed when it
   * settles (or when it detaches). A `signal` aborted while waiting takes the work out of line
   * (rejecting with its reason).
   */
  async run<T>(turn: FairTurn, work: (lease: SlotLease) => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    const tenant = this.tenantOf(turn.tenant);
    let line = tenant.jobs.get(turn.job);
    if (!line) tenant.jobs.set(turn.job, (line = { running: 0, waiting: [], servedAt: 0 }));
    const job = line;
    await new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          signal?.removeEventListener('abort', waiter.onAbort);
          resolve();
        },
        onAbort: () => {
          const at = job.waiting.indexOf(waiter);
          if (at !== -1) {
            job.waiting.splice(at, 1);
            tenant.waiting -= 1;
          }
          this.settled(tenant, turn.job, job);
          reject(signal!.reason);
          this.pump();
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      job.waiting.push(waiter);
      tenant.waiting += 1;
      tenant.peak = Math.max(tenant.peak, tenant.running + tenant.waiting);
      this.pump();
    });
    let detached = false;
    const lease: SlotLease = {
      detach: () => {
        if (detached) return true;
        if (this.detached >= this.maxDetached) return false;
        detached = true;
        this.detached += 1;
        this.running -= 1;
        tenant.detached += 1;
        tenant.running -= 1;
        // It asks for no slot any more: its tenant's claim shrinks by it, or a slot would stay idle for it.
        tenant.peak = Math.max(tenant.running + tenant.waiting, tenant.peak - 1);
        this.pump();
        return true;
      },
    };
    try {
      return await work(lease);
    } finally {
      job.running -= 1;
      if (detached) {
        this.detached -= 1;
        tenant.detached -= 1;
      } else {
        this.running -= 1;
        tenant.running -= 1;
      }
      this.settled(tenant, turn.job, job);
      this.pump();
    }
  }

  private tenantOf(name: string): TenantState {
    let state = this.tenants.get(name);
    if (!state) this.tenants.set(name, (state = { running: 0, detached: 0, waiting: 0, peak: 0, idleSince: null, servedAt: 0, jobs: new Map() }));
    state.idleSince = null;
    return state;
  }

  /** A job line with nothing left goes; a tenant with nothing left starts its hold. */
  private settled(tenant: TenantState, name: string, job: JobLine): void {
    if (job.running === 0 && job.waiting.length === 0) tenant.jobs.delete(name);
    if (tenant.running === 0 && tenant.detached === 0 && tenant.waiting === 0) tenant.idleSince = this.now();
  }

  private pump(): void {
    const now = this.now();
    for (const [name, s] of this.tenants) if (s.idleSince !== null && now - s.idleSince >= this.holdMs) this.tenants.delete(name);
    while (this.running < this.slots) {
      const shares = this.computeShares();
      let chosen: TenantState | undefined;
      for (const s of this.tenants.values()) {
        if (s.waiting === 0 || s.running >= Math.ceil(shares.get(s)!)) continue;
        const load = s.running + s.detached;
        const best = chosen ? chosen.running + chosen.detached : Infinity;
        if (load < best || (load === best && s.servedAt < chosen!.servedAt)) chosen = s;
      }
      if (!chosen) break;
      let line: JobLine | undefined;
      for (const j of chosen.jobs.values()) {
        if (j.waiting.length === 0) continue;
        if (!line || j.running < line.running || (j.running === line.running && j.servedAt < line.servedAt)) line = j;
      }
      const waiter = line!.waiting.shift()!;
      chosen.waiting -= 1;
      chosen.running += 1;
      line!.running += 1;
      this.running += 1;
      chosen.servedAt = line!.servedAt = ++this.handedOut;
      waiter.start();
    }
    this.wakeForExpiry(now);
  }

  /** Max-min fair shares of the slots over the tenants' demands (water-filling). */
  private computeShares(): Map<TenantState, number> {
    const states = [...this.tenants.values()].sort((a, b) => this.demand(a) - this.demand(b));
    const shares = new Map<TenantState, number>();
    let left = this.slots;
    states.forEach((s, i) => {
      const share = Math.min(this.demand(s), left / (states.length - i));
      shares.set(s, share);
      left -= share;
    });
    return shares;
  }

  private demand(s: TenantState): number {
    return Math.max(s.peak, s.running + s.waiting);
  }

  /** Work held back by a claim of an idle tenant runs when the claim lapses: one timer, for the first to lapse. */
  private wakeForExpiry(now: number): void {
    if (this.running >= this.slots || this.queued === 0) return;
    let at = Infinity;
    for (const s of this.tenants.values()) if (s.idleSince !== null) at = Math.min(at, s.idleSince + this.holdMs);
    if (at === Infinity || (this.timer && this.timerAt <= at)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.pump();
    }, Math.max(0, at - now));
    this.timer.unref();
  }
}
