/**
 * A current ClickHouse in-process (chdb, the engine as a library) behind the projector's own
 * ClickHouse interface, so the projector's code — schema, writes, checks, queries, a replay's
 * statements — runs unchanged on it: what reaches the engine is the same SQL text and the same
 * TabSeparated rows the HTTP client sends.
 *
 * The HTTP interface's per-request parts have their in-session equivalents: the database chosen
 * per request is a `USE` before the statement; settings sent along are a SETTINGS clause; the
 * JSON setting the client always sends (JSON_64BIT) is set for the session; and external data
 * (a table sent with a query, which the server holds as a temporary table for that query) is a
 * temporary table of the session, filled from the same TabSeparated rows, read by the same name,
 * and dropped after the query.
 */
import { Session } from 'chdb';
import { ClickHouse, JSON_64BIT, type ExternalTable, ident } from '@trawl/clickhouse';
import { ClickHouseQueryError, isRetriableChCode } from '../../src/errors.ts';

export class ChdbClickHouse extends ClickHouse {
  private constructor(
    private readonly session: Session,
    database: string,
    /** Statements of every instance on this session, one at a time (`USE` is the session's state). */
    private readonly queue: { tail: Promise<unknown> },
  ) {
    // The base class's HTTP pool is never dialled: every method that would use it is overridden.
    super({ url: 'http://chdb.invalid', database });
  }

  /** A fresh engine in a temporary directory, removed by `shutdown()`. */
  static async open(database: string): Promise<ChdbClickHouse> {
    const ch = new ChdbClickHouse(new Session(), database, { tail: Promise.resolve() });
    for (const [name, value] of Object.entries(JSON_64BIT)) await ch.run([`SET ${name} = ${value}`], null);
    return ch;
  }

  /** The engine's version, e.g. 26.7.2.1. */
  async version(): Promise<string> {
    return (await this.run(['SELECT version()'], null)).trim();
  }

  /**
   * Runs statements in order in `database`, the last one's output in `format`. Off the event
   * loop (queryAsync): a blocked loop would keep the HTTP client's idle sockets past the stack
   * server's keep-alive, and the test's next request to it would meet a closed one.
   */
  private run(statements: readonly string[], database: string | null, format = 'TabSeparated'): Promise<string> {
    const next = this.queue.tail.then(async () => {
      let out = '';
      for (const sql of [`USE ${ident(database ?? 'default')}`, ...statements]) {
        try {
          out = (await this.session.queryAsync(sql, { format })).text();
        } catch (err) {
          const text = (err as Error).message;
          const code = Number(/Code: (\d+)/.exec(text)?.[1] ?? NaN);
          const chCode = Number.isFinite(code) ? code : undefined;
          throw new ClickHouseQueryError(`ClickHouse (chdb) refused (code ${chCode ?? '?'}): ${text.trim().slice(0, 500)}`, chCode, isRetriableChCode(chCode));
        }
      }
      return out;
    });
    this.queue.tail = next.catch(() => undefined);
    return next;
  }

  override withDatabase(database: string): ChdbClickHouse {
    return new ChdbClickHouse(this.session, database, this.queue);
  }

  override async exec(sql: string, options: { database?: string | null } = {}): Promise<void> {
    await this.run([sql], options.database === undefined ? this.database : options.database);
  }

  override async rows<T = Record<string, unknown>>(
    sql: string,
    options: { database?: string | null; settings?: Record<string, string>; external?: ExternalTable } = {},
  ): Promise<T[]> {
    const database = options.database === undefined ? this.database : options.database;
    const settings = Object.entries(options.settings ?? {});
    const query = settings.length > 0 ? `${sql}\nSETTINGS ${settings.map(([k, v]) => `${k} = ${v}`).join(', ')}` : sql;
    const ext = options.external;
    const text = ext
      ? await this.run([
          `DROP TEMPORARY TABLE IF EXISTS ${ident(ext.name)}`,
          `CREATE TEMPORARY TABLE ${ident(ext.name)} (${ext.structure})`,
          ...(ext.tsv ? [`INSERT INTO ${ident(ext.name)} FORMAT TabSeparated\n${ext.tsv}`] : []),
          query,
        ], database, 'JSONEachRow')
      : await this.run([query], database, 'JSONEachRow');
    const out: T[] = [];
    for (const line of text.split('\n')) if (line) out.push(JSON.parse(line) as T);
    return out;
  }

  override async insertTsv(table: string, columns: readonly string[], body: string): Promise<void> {
    if (!body) return;
    await this.run([`INSERT INTO ${ident(table)} (${columns.map(ident).join(', ')}) FORMAT TabSeparated\n${body}`], this.database);
  }

  override async ping(): Promise<boolean> {
    return (await this.run(['SELECT 1'], null)) === '1\n';
  }

  /** Ends the engine and removes its temporary directory. */
  async shutdown(): Promise<void> {
    await super.close();
    await this.queue.tail;
    this.session.cleanup();
  }
}
