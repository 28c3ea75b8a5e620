/**
 * The one ClickHouse client: its HTTP interface with undici, a keep-alive pool, one statement per
 * request, the database chosen per request (so the same DDL runs in a shadow database), inserts
 * as TabSeparated bodies. Works with 18.16 and current releases alike, which the official client
 * does not promise for 18.16. Errors come back classified: ClickHouseUnavailableError (retriable)
 * or ClickHouseQueryError (a coded refusal, retriable when its number says so).
 *
 * Credentials travel only in the Authorization header: the URL kept for requests and named in
 * errors has them removed, so no message or log line carries them.
 */
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'undici';
import { ClickHouseQueryError, ClickHouseUnavailableError, isRetriableChCode } from './errors.ts';
import { ident } from './sql-text.ts';

export interface ClickHouseOptions {
  /** http://user:pass@host:8123 */
  readonly url: string;
  readonly database: string;
  /** Client-side deadline of a request, ms. Default 60 s. */
  readonly timeoutMs?: number;
  /** Settings sent with every request, e.g. `readonly: '2'` and `max_execution_time` for a reader. */
  readonly settings?: Readonly<Record<string, string>>;
}

/** A table sent along with a query (ClickHouse's external data): its name, its columns (`id String`), its rows as TabSeparated lines. */
export interface ExternalTable {
  readonly name: string;
  readonly structure: string;
  readonly tsv: string;
}

/** JSON output with 64-bit integers as strings (beyond 2^53 a number would lose digits). */
export const JSON_64BIT: Readonly<Record<string, string>> = { output_format_json_quote_64bit_integers: '1' };

export class ClickHouse {
  readonly database: string;
  /** As given, credentials included: withDatabase makes its copy from it. */
  private readonly url: string;
  private readonly base: URL;
  private readonly auth: string | undefined;
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly options: ClickHouseOptions;

  constructor(options: ClickHouseOptions) {
    this.options = options;
    this.url = options.url;
    const u = new URL(options.url);
    this.auth = u.username || u.password ? `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}` : undefined;
    u.username = '';
    u.password = '';
    u.pathname = '/';
    this.base = u;
    this.database = options.database;
    this.timeoutMs = options.timeoutMs ?? 60_000;
    // Under the server's keep-alive (3 s on 18.16), so an idle socket is never reused after the server closed it.
    this.agent = new Agent({ keepAliveTimeout: 2_000, keepAliveMaxTimeout: 2_500, connections: 8, connectTimeout: 5_000 });
  }

  /** The same server and user, another database (a replay's shadow). */
  withDatabase(database: string): ClickHouse {
    return new ClickHouse({ ...this.options, url: this.url, database });
  }

  /** `database` null: none chosen (server-level statements, or one that may not exist yet). */
  private async send(params: Record<string, string>, body: string | Buffer, database: string | null = this.database, contentType?: string): Promise<string> {
    const u = new URL(this.base.toString());
    if (database) u.searchParams.set('database', database);
    for (const [k, v] of Object.entries({ ...this.options.settings, ...params })) u.searchParams.set(k, v);
    let res;
    try {
      res = await request(u, {
        method: 'POST',
        body,
        dispatcher: this.agent,
        headers: { ...(this.auth ? { authorization: this.auth } : {}), ...(contentType ? { 'content-type': contentType } : {}) },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
      });
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      throw new ClickHouseUnavailableError(`ClickHouse at ${this.base.host} did not answer (${code || (err as Error).message})`, { cause: err });
    }
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      throw new ClickHouseUnavailableError(`ClickHouse at ${this.base.host} broke off its answer: ${(err as Error).message}`, { cause: err });
    }
    if (res.statusCode === 200) return text;
    const chCode = Number(/^Code: (\d+)/.exec(text)?.[1] ?? res.headers['x-clickhouse-exception-code'] ?? NaN);
    const code = Number.isFinite(chCode) ? chCode : undefined;
    if (res.statusCode >= 500 && code === undefined) throw new ClickHouseUnavailableError(`ClickHouse answered HTTP ${res.statusCode}: ${text.slice(0, 300)}`);
    throw new ClickHouseQueryError(`ClickHouse refused (code ${code ?? '?'}): ${text.trim().slice(0, 500)}`, code, isRetriableChCode(code));
  }

  /** Runs a statement that returns nothing of interest (DDL, INSERT … SELECT). */
  async exec(sql: string, options: { database?: string | null } = {}): Promise<void> {
    await this.send({}, sql, options.database === undefined ? this.database : options.database);
  }

  /**
   * Runs a SELECT and returns its rows (FORMAT JSONEachRow). 64-bit integers come back as strings,
   * on every version: asked for by setting (JSON_64BIT), since 18.16 quotes them by default and
   * current releases do not.
   * `settings` go along as URL parameters (e.g. `max_query_size` for a long IN list). `external`
   * sends a table the query can read by name (ClickHouse's external data, one TabSeparated column
   * per line): a long list for `IN name` travels as data instead of being parsed as SQL, which
   * cost the server three times the CPU for a flush's 14,000 ids.
   */
  async rows<T = Record<string, unknown>>(
    sql: string,
    options: { database?: string | null; settings?: Record<string, string>; external?: ExternalTable } = {},
  ): Promise<T[]> {
    const database = options.database === undefined ? this.database : options.database;
    let text: string;
    if (options.external) {
      const { name, structure, tsv } = options.external;
      const boundary = `trawl-${randomBytes(12).toString('hex')}`;
      const body = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}"\r\n\r\n${tsv}\r\n--${boundary}--\r\n`;
      const params = { ...options.settings, ...JSON_64BIT, query: `${sql}\nFORMAT JSONEachRow`, [`${name}_structure`]: structure };
      text = await this.send(params, body, database, `multipart/form-data; boundary=${boundary}`);
    } else {
      text = await this.send({ ...options.settings, ...JSON_64BIT }, `${sql}\nFORMAT JSONEachRow`, database);
    }
    const out: T[] = [];
    for (const line of text.split('\n')) if (line) out.push(JSON.parse(line) as T);
    return out;
  }

  /** Inserts a TabSeparated body (rows already escaped, one per line). */
  async insertTsv(table: string, columns: readonly string[], body: string): Promise<void> {
    if (!body) return;
    await this.send({ query: `INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')}) FORMAT TabSeparated` }, body);
  }

  async ping(): Promise<boolean> {
    try {
      await this.send({}, 'SELECT 1', null);
      return true;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

