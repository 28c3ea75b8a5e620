/** apps/services/webhooks' reads and writes of the webhook tables (@trawl/store's WEBHOOK_MIGRATIONS). */
import type pg from 'pg';
import type { Pool } from '@trawl/store';
import type { DeliveryBody } from './event-payload.ts';

export interface JobOwner {
  readonly user_id: string;
  readonly schedule_id: string | null;
}

export interface Subscription {
  readonly id: string;
}

export interface NewDelivery {
  readonly id: string;
  readonly webhookId: string;
  readonly eventId: string;
  readonly type: string;
  readonly jobId: string | null;
  /** A job event's offset on trawl.jobs: the order of the job's events. */
  readonly sourceOffset: string | null;
  readonly itemIds: readonly string[] | null;
  readonly body: DeliveryBody;
}

export interface DeliveryToSend {
  readonly id: string;
  readonly webhook_id: string;
  readonly event_id: string;
  readonly type: string;
  readonly job_id: string | null;
  readonly source_offset: string | null;
  readonly status: string;
  readonly body: DeliveryBody;
  readonly url: string | null;
  readonly secret: string | null;
  readonly usable: boolean;
  /** The earliest unfinished delivery of an earlier event of the same job to the same webhook: this one waits for it. */
  readonly blocked_by: string | null;
  /** The webhook's owner, whose delivery budget an attempt takes from (delivery-budget.ts). */
  readonly user_id: string;
  /** When the delivery was first written: how long a spent budget has held it. */
  readonly created_at: Date;
}

const INSERT_DELIVERIES = `INSERT INTO webhook_deliveries (id, webhook_id, event_id, type, job_id, source_offset, item_ids, body)
  SELECT d.id, d.webhook_id, d.event_id, d.type, d.job_id, d.source_offset::bigint, d.item_ids, d.body
  FROM jsonb_to_recordset($1::jsonb) AS d(id text, webhook_id text, event_id text, type text, job_id text, source_offset text, item_ids text[], body jsonb)`;

function recordset(deliveries: readonly NewDelivery[]): string {
  return JSON.stringify(deliveries.map((d) => ({ id: d.id, webhook_id: d.webhookId, event_id: d.eventId, type: d.type, job_id: d.jobId, source_offset: d.sourceOffset, item_ids: d.itemIds, body: d.body })));
}

/**
 * Thousands of handlers may want Postgres at once (a thousand jobs ending together; a window's
 * items). They queue here, at most `maxQueries` running, rather than in the pool, whose wait for a
 * free connection has a timeout meant to notice an unreachable database, not a busy moment.
 */
export class DeliveryStore {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly pool: Pool,
    private readonly maxQueries = 8,
  ) {}

  private async query<R extends pg.QueryResultRow>(sql: string, args: readonly unknown[]): Promise<pg.QueryResult<R>> {
    if (this.running >= this.maxQueries) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await this.pool.query<R>(sql, args as unknown[]);
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  /** Who owns the job; a null user: a job without an owner (a seeded schedule's), known as such. */
  async rememberJob(jobId: string, userId: string | null, scheduleId: string | null): Promise<void> {
    await this.query('INSERT INTO webhook_jobs (job_id, user_id, schedule_id) VALUES ($1, $2, $3) ON CONFLICT (job_id) DO NOTHING', [jobId, userId, scheduleId]);
  }

  /**
   * The job's owner: from JobDispatched (webhook_jobs), else from projector-pg's read model for a
   * job dispatched before this service first ran (same database by default). Null: the job is
   * known and has no owner; undefined: not known (yet).
   */
  async jobOwner(jobId: string): Promise<JobOwner | null | undefined> {
    const known = (row: { user_id: string | null; schedule_id: string | null } | undefined) => (row ? (row.user_id === null ? null : (row as JobOwner)) : undefined);
    const { rows } = await this.query<{ user_id: string | null; schedule_id: string | null }>('SELECT user_id, schedule_id FROM webhook_jobs WHERE job_id = $1', [jobId]);
    if (rows[0]) return known(rows[0]);
    try {
      const r = await this.query<{ user_id: string | null; schedule_id: string | null }>('SELECT user_id, schedule_id FROM jobs WHERE job_id = $1', [jobId]);
      return known(r.rows[0]);
    } catch (err) {
      if ((err as { code?: string }).code === '42P01' || (err as { code?: string }).code === '42703') return undefined;
      throw err;
    }
  }

  /**
   * The owner's subscriptions to `type` for this job that existed when the event happened. Event
   * times have milliseconds, `created_at` microseconds: a subscription made in the event's own
   * millisecond counts as existing (compared at the events' precision).
   */
  async subscriptions(owner: JobOwner, type: string, jobId: string, occurredAt: Date): Promise<Subscription[]> {
    const { rows } = await this.query<Subscription>(
      `SELECT id FROM webhooks
       WHERE user_id = $1 AND active AND deleted_at IS NULL AND $2 = ANY (events) AND date_trunc('milliseconds', created_at) <= $5
         AND (job_id IS NULL OR job_id = $3) AND (schedule_id IS NULL OR schedule_id = $4)`,
      [owner.user_id, type, jobId, owner.schedule_id, occurredAt],
    );
    return rows;
  }

  /** Whether any active subscription of anyone takes `type`. */
  async anySubscription(type: string): Promise<boolean> {
    const { rows } = await this.query('SELECT 1 FROM webhooks WHERE active AND deleted_at IS NULL AND $1 = ANY (events) LIMIT 1', [type]);
    return rows.length > 0;
  }

  /** Inserts what is not there yet (ids are deterministic, so a re-read inserts nothing). */
  async ensure(deliveries: readonly NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.query(`${INSERT_DELIVERIES} ON CONFLICT (id) DO NOTHING`, [recordset(deliveries)]);
  }

  /** `ensure`, then every delivery of the source event `eventId` (a job event's rows carry its id as event_id). */
  async ensureForEvent(eventId: string, deliveries: readonly NewDelivery[]): Promise<string[]> {
    // The statement's snapshot does not see its own inserts: hence the union with what it inserted.
    const { rows } = await this.query<{ id: string }>(
      `WITH inserted AS (${INSERT_DELIVERIES} ON CONFLICT (id) DO NOTHING RETURNING id)
       SELECT id FROM inserted UNION SELECT id FROM webhook_deliveries WHERE event_id = $2`,
      [recordset(deliveries), eventId],
    );
    return rows.map((r) => r.id);
  }

  /** Item deliveries of these webhooks that already hold some of these items: what a re-read or retry must reuse. */
  async itemDeliveries(webhookIds: readonly string[], itemIds: readonly string[]): Promise<{ id: string; webhook_id: string; item_ids: string[] }[]> {
    const { rows } = await this.query<{ id: string; webhook_id: string; item_ids: string[] }>(
      'SELECT id, webhook_id, item_ids FROM webhook_deliveries WHERE webhook_id = ANY ($1) AND item_ids && $2::text[]',
      [webhookIds, itemIds],
    );
    return rows;
  }

  async load(id: string): Promise<DeliveryToSend | undefined> {
    const { rows } = await this.query<DeliveryToSend>(
      `SELECT d.id, d.webhook_id, d.event_id, d.type, d.job_id, d.source_offset::text AS source_offset, d.status, d.body,
              w.url, w.secret, (w.active AND w.deleted_at IS NULL) AS usable,
              w.user_id, d.created_at,
              (SELECT b.id FROM webhook_deliveries b
               WHERE d.source_offset IS NOT NULL AND b.webhook_id = d.webhook_id AND b.job_id = d.job_id
                 AND b.source_offset < d.source_offset AND b.status NOT IN ('delivered', 'failed')
               ORDER BY b.source_offset LIMIT 1) AS blocked_by
       FROM webhook_deliveries d JOIN webhooks w ON w.id = d.webhook_id WHERE d.id = $1`,
      [id],
    );
    return rows[0];
  }

  /**
   * Marks the delivery done and, in the same statement, names the delivery of its job and webhook
   * next in log order that waits behind it (status `retrying`), with the try already planned for
   * it: none when nothing waits or the delivery has no source offset.
   */
  async delivered(id: string, status: number | undefined): Promise<{ id: string; next_attempt_at: Date | null } | undefined> {
    const { rows } = await this.query<{ id: string; next_attempt_at: Date | null }>(
      `WITH d AS (
         UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, last_status = $2, last_error = NULL,
           next_attempt_at = NULL, delivered_at = now(), updated_at = now() WHERE id = $1
         RETURNING webhook_id, job_id, source_offset)
       SELECT n.id, n.next_attempt_at FROM d
       JOIN webhook_deliveries n ON n.webhook_id = d.webhook_id AND n.job_id = d.job_id AND n.source_offset > d.source_offset
       WHERE n.status = 'retrying' ORDER BY n.source_offset LIMIT 1`,
      [id, status ?? null],
    );
    return rows[0];
  }

  /** A failed attempt (`attempted`) or a wait behind an earlier delivery; `nextAt` null: no try is planned. */
  async notYet(id: string, error: string, o: { readonly attempted: boolean; readonly status?: number; readonly nextAt: Date | null; readonly final?: boolean }): Promise<void> {
    await this.query(
      `UPDATE webhook_deliveries SET status = $3, attempts = attempts + $4, last_status = coalesce($5, last_status), last_error = $2,
         next_attempt_at = $6, updated_at = now() WHERE id = $1 AND status <> 'delivered'`,
      [id, error, o.final ? 'failed' : 'retrying', o.attempted ? 1 : 0, o.status ?? null, o.nextAt],
    );
  }

  /** The source event went to the deliveries' dead-letter topic: its unfinished deliveries fail. */
  async deadLettered(where: { readonly eventId: string } | { readonly itemId: string }, reason: string): Promise<number> {
    const [cond, arg] = 'eventId' in where ? ['event_id = $1', where.eventId] : ['item_ids @> ARRAY[$1]::text[]', where.itemId];
    const { rowCount } = await this.query(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, updated_at = now(),
         last_error = coalesce(last_error || ' — ', '') || $2
       WHERE ${cond} AND status IN ('pending', 'retrying')`,
      [arg, reason],
    );
    return rowCount ?? 0;
  }

  /**
   * Claims re-deliveries and tests asked through the API (and claims older than `staleMs` whose
   * process died while sending): several instances may poll.
   */
  async claimRequested(limit: number, staleMs: number): Promise<string[]> {
    const { rows } = await this.query<{ id: string }>(
      `UPDATE webhook_deliveries SET status = 'sending', updated_at = now()
       WHERE id IN (
         SELECT id FROM webhook_deliveries
         WHERE status = 'requested' OR (status = 'sending' AND updated_at < now() - make_interval(secs => $2::double precision / 1000))
         ORDER BY updated_at LIMIT $1 FOR UPDATE SKIP LOCKED)
       RETURNING id`,
      [limit, staleMs],
    );
    return rows.map((r) => r.id);
  }
}
