/**
 * One Postgres connection that LISTENs on a channel for as long as the process runs, and comes
 * back when it is lost.
 *
 * What is announced while the connection is down is lost for good (Postgres keeps notifications
 * only for sessions listening when they are sent), so `onListening` fires on every (re)connect,
 * after the LISTEN: whoever relies on the notifications reloads there, and nothing committed
 * after that reload began can be missed.
 *
 * A connection can die without a word (a half-open socket after a network fault): it is asked a
 * `SELECT 1` every `pingMs`, and one that does not answer within `pingTimeoutMs` is dropped and
 * made again. Reconnects are spaced from `retryMinMs`, doubling up to `retryMaxMs`.
 *
 * The connection is taken from the app's pool (the same server, credentials and TLS), holds one
 * of its slots, and is destroyed rather than given back: its session is the listener's. It goes
 * by `applicationName` in `pg_stat_activity`.
 */
import type { Pool, PoolClient } from '@trawl/store';

export interface NotificationListenerOptions {
  readonly pool: Pick<Pool, 'connect'>;
  readonly channel: string;
  readonly applicationName: string;
  readonly onNotification: (payload: string) => void;
  /** Listening (again): what was announced before this moment may have been missed. */
  readonly onListening?: () => void;
  /** The connection was lost, or could not be made; a new attempt follows. */
  readonly onDown?: (err: unknown) => void;
  readonly retryMinMs?: number;
  readonly retryMaxMs?: number;
  readonly pingMs?: number;
  readonly pingTimeoutMs?: number;
}

export class NotificationListener {
  private client: PoolClient | undefined;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private pingTimer: NodeJS.Timeout | undefined;
  private delay: number;
  private readonly retryMinMs: number;
  private readonly retryMaxMs: number;

  constructor(private readonly options: NotificationListenerOptions) {
    this.retryMinMs = options.retryMinMs ?? 250;
    this.retryMaxMs = options.retryMaxMs ?? 5_000;
    this.delay = this.retryMinMs;
  }

  /** Whether the channel is being listened to right now. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  /** Connects and listens. Rejects when this first attempt fails: the caller decides whether to go on without. */
  async start(): Promise<void> {
    await this.connect();
    this.pingTimer = setInterval(() => void this.ping(), this.options.pingMs ?? 15_000);
    this.pingTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    const client = this.client;
    this.client = undefined;
    client?.release(true);
  }

  private async connect(): Promise<void> {
    const client = await this.options.pool.connect();
    // Kept for the client's whole life, even once dropped: an 'error' without a listener would crash the process.
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client, new Error('the listening connection ended')));
    // Heard from the moment LISTEN is in effect, even before the continuation below runs (a
    // notification may arrive in the very packet that ends the LISTEN); a dropped client says nothing more.
    client.on('notification', (message) => {
      if (!this.closed && message.channel === this.options.channel && message.payload !== undefined) this.options.onNotification(message.payload);
    });
    try {
      await client.query('SELECT set_config($1, $2, false)', ['application_name', this.options.applicationName]);
      await client.query(`LISTEN ${client.escapeIdentifier(this.options.channel)}`);
    } catch (err) {
      client.release(err instanceof Error ? err : true);
      throw err;
    }
    if (this.closed) {
      client.release(true);
      return;
    }
    this.client = client;
    this.delay = this.retryMinMs;
    this.options.onListening?.();
  }

  /** The connection `client` is gone (or not trusted any more): drop it and make another. */
  private lost(client: PoolClient, err: unknown): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.release(err instanceof Error ? err : true);
    if (this.closed) return;
    this.options.onDown?.(err);
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.closed || this.retryTimer) return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.retryMaxMs);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connect().catch((err: unknown) => {
        if (this.closed) return;
        this.options.onDown?.(err);
        this.reconnectLater();
      });
    }, wait);
    this.retryTimer.unref();
  }

  private async ping(): Promise<void> {
    const client = this.client;
    if (!client) return;
    const timeoutMs = this.options.pingTimeoutMs ?? 5_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`the listening connection did not answer within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      this.lost(client, err);
    } finally {
      clearTimeout(timer);
    }
  }
}
