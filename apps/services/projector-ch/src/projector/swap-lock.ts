/**
 * The lock that lets `trawl replay ch` swap tables under a running projector, kept in Postgres
 * because ClickHouse has no locks: each flush holds it shared, the swap holds it exclusive. So
 * the swap waits for the flush in flight and no flush writes into tables being renamed.
 *
 * The cost: the analytics projector also pauses while Postgres is away. `NO_SWAP_LOCK` runs
 * without it (a deployment without Postgres), and then a replay must not run with the projector up.
 */
import pg from 'pg';

export const CH_SWAP_LOCK = 'trawl:projection:ch:swap';
export const CH_REPLAY_LOCK = 'trawl:projection:ch:replay';

export interface SwapLock {
  withShared<T>(work: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export const NO_SWAP_LOCK: SwapLock = {
  withShared: (work) => work(),
  close: async () => {},
};

/** A session-level shared advisory lock on one dedicated connection, re-made after any failure. */
export class PgSwapLock implements SwapLock {
  private client: pg.Client | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly key: string = CH_SWAP_LOCK,
  ) {}

  private async connection(): Promise<pg.Client> {
    if (this.client) return this.client;
    const c = new pg.Client({ connectionString: this.databaseUrl, connectionTimeoutMillis: 5_000, application_name: 'trawl-projector-ch-lock' });
    c.on('error', () => {
      if (this.client === c) this.client = undefined;
    });
    await c.connect();
    this.client = c;
    return c;
  }

  async withShared<T>(work: () => Promise<T>): Promise<T> {
    let c: pg.Client;
    try {
      c = await this.connection();
      await c.query('SELECT pg_advisory_lock_shared(hashtext($1))', [this.key]);
    } catch (err) {
      await this.reset();
      throw err;
    }
    try {
      return await work();
    } finally {
      await c.query('SELECT pg_advisory_unlock_shared(hashtext($1))', [this.key]).catch(() => this.reset());
    }
  }

  private async reset(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.reset();
  }
}
