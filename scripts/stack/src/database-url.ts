/**
 * DATABASE_URL handling: the same server serves Trawl's database and the schema registry's, and
 * Apicurio (Java) wants it as a JDBC URL with the credentials apart.
 */
import { redactUrl } from '@trawl/streams';

export interface DatabaseTarget {
  readonly host: string;
  readonly port: number;
  readonly database: string;
  readonly user: string;
  readonly password: string;
  /** Query parameters (sslmode…), passed on to JDBC unchanged. */
  readonly params: URLSearchParams;
}

export function parseDatabaseUrl(url: string): DatabaseTarget {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`DATABASE_URL is not a URL: "${redactUrl(url)}"`);
  }
  if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') {
    throw new Error(`DATABASE_URL must start with postgres:// or postgresql://, got "${u.protocol}//"`);
  }
  return {
    host: u.hostname || '127.0.0.1',
    port: u.port ? Number(u.port) : 5432,
    database: decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres',
    user: decodeURIComponent(u.username) || 'postgres',
    password: decodeURIComponent(u.password),
    params: u.searchParams,
  };
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(database)}`;
  return u.toString();
}

export interface JdbcTarget {
  readonly url: string;
  readonly username: string;
  readonly password: string;
}

/**
 * The JDBC form of a DATABASE_URL for another database on the same server. Credentials stay out
 * of the URL: the registry gets them through environment variables, so they do not show in `ps`.
 */
export function jdbcFromDatabaseUrl(databaseUrl: string, database: string): JdbcTarget {
  const t = parseDatabaseUrl(databaseUrl);
  // An IPv6 literal keeps its brackets in JDBC; URL.hostname already has them.
  const query = t.params.toString();
  return {
    url: `jdbc:postgresql://${t.host}:${t.port}/${encodeURIComponent(database)}${query ? `?${query}` : ''}`,
    username: t.user,
    password: t.password,
  };
}

/** Whether the host is this machine, so a pid and memory can be looked up for it. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127\./.test(host);
}
