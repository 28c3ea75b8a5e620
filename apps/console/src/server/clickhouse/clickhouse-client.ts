/**
 * A small read-only ClickHouse client over the HTTP interface (Node's fetch). Every query runs
 * with `readonly=2` — a dashboard query that somehow carried a write would be refused by the
 * server — and with a server-side time limit, so a heavy range cannot hold a connection for long.
 * 64-bit integers arrive as strings in JSONEachRow; callers convert with Number().
 */
import { checkDatabaseName } from './sql-text.ts';

export interface ClickHouseOptions {
  /** http://user:pass@host:8123 */
  readonly url: string;
  readonly database: string;
  /** Server-side `max_execution_time`, seconds. */
  readonly maxExecutionSeconds?: number;
  /** Client-side deadline, ms (a little above the server's, so the server's message wins). */
  readonly timeoutMs?: number;
}

/** ClickHouse answered with an error (a refused or failed query). */
export class ClickHouseQueryError extends Error {
  constructor(
    message: string,
    readonly chCode: number | undefined,
  ) {
    super(message);
    this.name = 'ClickHouseQueryError';
  }
}

/** ClickHouse did not answer at all (down, unreachable, timed out). */
export class ClickHouseUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ClickHouseUnavailableError';
  }
}

export class ClickHouseReader {
  readonly database: string;
  private readonly endpoint: URL;
  private readonly authorization: string | undefined;
  private readonly maxExecutionSeconds: number;
  private readonly timeoutMs: number;

  constructor(options: ClickHouseOptions) {
    const u = new URL(options.url);
    this.authorization =
      u.username || u.password ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}` : undefined;
    u.username = '';
    u.password = '';
    u.pathname = '/';
    this.endpoint = u;
    this.database = checkDatabaseName(options.database);
    this.maxExecutionSeconds = options.maxExecutionSeconds ?? 15;
    this.timeoutMs = options.timeoutMs ?? (this.maxExecutionSeconds + 5) * 1000;
  }

  /** Runs a SELECT; rows as objects. */
  async rows<T = Record<string, unknown>>(sql: string): Promise<T[]> {
    const u = new URL(this.endpoint);
    u.searchParams.set('database', this.database);
    u.searchParams.set('readonly', '2');
    u.searchParams.set('max_execution_time', String(this.maxExecutionSeconds));
    let res: Response;
    try {
      res = await fetch(u, {
        method: 'POST',
        body: `${sql}\nFORMAT JSONEachRow`,
        headers: this.authorization ? { authorization: this.authorization } : {},
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      throw new ClickHouseUnavailableError(`ClickHouse at ${this.endpoint.host}: ${(err as Error).message}`, { cause: err });
    }
    const text = await res.text();
    if (!res.ok) {
      const code = Number(/^Code: (\d+)/.exec(text)?.[1] ?? res.headers.get('x-clickhouse-exception-code') ?? NaN);
      throw new ClickHouseQueryError(`ClickHouse refused a query: ${text.trim().slice(0, 400)}`, Number.isFinite(code) ? code : undefined);
    }
    const out: T[] = [];
    for (const line of text.split('\n')) if (line) out.push(JSON.parse(line) as T);
    return out;
  }
}
