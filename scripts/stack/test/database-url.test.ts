import { describe, expect, it } from 'vitest';
import { redactUrl } from '@trawl/streams';
import { isLoopback, jdbcFromDatabaseUrl, parseDatabaseUrl, withDatabase } from '../src/database-url.ts';

describe('jdbcFromDatabaseUrl', () => {
  it('points at the other database on the same server, credentials apart', () => {
    expect(jdbcFromDatabaseUrl('postgres://postgres@127.0.0.1:5433/trawl', 'trawl_registry')).toEqual({
      url: 'jdbc:postgresql://127.0.0.1:5433/trawl_registry',
      username: 'postgres',
      password: '',
    });
  });

  it('decodes percent-encoded credentials and keeps them out of the URL', () => {
    const j = jdbcFromDatabaseUrl('postgresql://app%40corp:p%3Ass%2Fw0rd@db.internal/trawl', 'trawl_registry');
    expect(j).toEqual({ url: 'jdbc:postgresql://db.internal:5432/trawl_registry', username: 'app@corp', password: 'p:ss/w0rd' });
    expect(j.url).not.toContain('w0rd');
  });

  it('passes query parameters such as sslmode through', () => {
    expect(jdbcFromDatabaseUrl('postgres://u:p@h:6543/d?sslmode=require', 'r').url).toBe('jdbc:postgresql://h:6543/r?sslmode=require');
  });

  it('keeps the brackets of an IPv6 literal', () => {
    expect(jdbcFromDatabaseUrl('postgres://postgres@[::1]:5432/trawl', 'r').url).toBe('jdbc:postgresql://[::1]:5432/r');
  });

  it('refuses what is not a Postgres URL', () => {
    expect(() => jdbcFromDatabaseUrl('mysql://root@localhost/x', 'r')).toThrow(/postgres:\/\//);
    expect(() => jdbcFromDatabaseUrl('not a url', 'r')).toThrow(/not a URL/);
  });
});

describe('database URL helpers', () => {
  it('defaults user, port and database like libpq', () => {
    const t = parseDatabaseUrl('postgres://127.0.0.1');
    expect([t.user, t.port, t.database]).toEqual(['postgres', 5432, 'postgres']);
  });

  it('swaps the database and nothing else', () => {
    expect(withDatabase('postgres://u:p@h:1/trawl?sslmode=disable', 'postgres')).toBe('postgres://u:p@h:1/postgres?sslmode=disable');
  });

  it('hides passwords in what it prints', () => {
    expect(redactUrl('postgres://u:secret@h/d')).toBe('postgres://u:***@h/d');
    expect(redactUrl('postgres://u@h/d')).toBe('postgres://u@h/d');
  });

  it('knows loopback hosts', () => {
    expect(['127.0.0.1', 'localhost', '[::1]', '127.1.2.3'].every(isLoopback)).toBe(true);
    expect(isLoopback('db.internal')).toBe(false);
  });
});
