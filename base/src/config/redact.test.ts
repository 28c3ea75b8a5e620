import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { endpoints } from './endpoints.ts';
import { authHeaders, httpTarget } from './http-credentials.ts';
import { endpointSecrets, redactEndpoints, redactText, redactUrl } from './redact.ts';

describe('redaction of credentials in endpoints', () => {
  it('masks the password of a URL and keeps the rest', () => {
    expect(redactUrl('postgres://trawl:s3cr%40t@127.0.0.1:5432/trawl?sslmode=disable')).toBe('postgres://trawl:***@127.0.0.1:5432/trawl?sslmode=disable');
    expect(redactUrl('http://trawl_writer:pw@127.0.0.1:8123')).toBe('http://trawl_writer:***@127.0.0.1:8123/');
    expect(redactUrl('http://127.0.0.1:8123')).toBe('http://127.0.0.1:8123');
  });

  it('masks every endpoint of a configuration', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-redact-'));
    writeFileSync(join(home, 'stack.env'), 'CLICKHOUSE_URL=http://w:wpass@127.0.0.1:8123\nCLICKHOUSE_READ_URL=http://r:rpass@127.0.0.1:8123\n');
    const ep = endpoints({ TRAWL_HOME: home, DATABASE_URL: 'postgres://trawl:pgpass@127.0.0.1:5432/trawl', SCHEMA_REGISTRY_URL: 'http://trawl:regpass@127.0.0.1:8081/apis/ccompat/v7', TRAWL_S3_URL: 'http://trawl:s3pass@127.0.0.1:9100' });
    const shown = JSON.stringify(redactEndpoints(ep));
    for (const secret of ['wpass', 'rpass', 'pgpass', 'regpass', 's3pass']) expect(shown).not.toContain(secret);
    expect(shown).toContain('postgres://trawl:***@127.0.0.1:5432/trawl');
    expect(endpointSecrets(ep).sort()).toEqual(['pgpass', 'regpass', 'rpass', 's3pass', 'wpass']);
  });

  it('masks URLs and known passwords inside free text (error messages)', () => {
    const msg = 'connect ECONNREFUSED for http://trawl:regpass@127.0.0.1:8081/apis/ccompat/v7/subjects; password was regpass';
    expect(redactText(msg, ['regpass'])).toBe('connect ECONNREFUSED for http://trawl:***@127.0.0.1:8081/apis/ccompat/v7/subjects; password was ***');
  });
});

describe('redaction of credentials in free text', () => {
  it.each([
    ['connect ECONNREFUSED postgres://trawl:s3cret@db.internal:5432/trawl', 'connect ECONNREFUSED postgres://trawl:***@db.internal:5432/trawl'],
    ['http://reader:p%40ss@127.0.0.1:8123/ping answered 401', 'http://reader:***@127.0.0.1:8123/ping answered 401'],
    ['http://127.0.0.1:8123/?user=writer&password=hunter2&query=1', 'http://127.0.0.1:8123/?user=writer&password=***&query=1'],
    ['/events?access_token=abc123&x=1', '/events?access_token=***&x=1'],
    ['two: postgres://a:b@h1/x and http://c:d@h2/', 'two: postgres://a:***@h1/x and http://c:***@h2/'],
    ['no answer within 2000 ms', 'no answer within 2000 ms'],
    ['mail me at someone@example.com', 'mail me at someone@example.com'],
  ])('%s', (input, expected) => {
    expect(redactText(input)).toBe(expected);
  });
});

describe('HTTP endpoints with credentials', () => {
  it('splits user information into a Basic authorization header', () => {
    expect(httpTarget('http://trawl_reader:p%40ss@127.0.0.1:8123/')).toEqual({ url: 'http://127.0.0.1:8123/', authorization: `Basic ${Buffer.from('trawl_reader:p@ss').toString('base64')}` });
    expect(httpTarget('http://127.0.0.1:8123')).toEqual({ url: 'http://127.0.0.1:8123', authorization: undefined });
    expect(authHeaders('http://127.0.0.1:8123')).toEqual({});
  });
});

describe('the read-only ClickHouse endpoint', () => {
  it('comes from CLICKHOUSE_READ_URL, else from the source of CLICKHOUSE_URL', () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-endpoints-'));
    writeFileSync(join(home, 'stack.env'), 'CLICKHOUSE_URL=http://w:x@127.0.0.1:18123\nCLICKHOUSE_READ_URL=http://r:y@127.0.0.1:18123\n');
    expect(endpoints({ TRAWL_HOME: home }).clickhouseReadUrl).toBe('http://r:y@127.0.0.1:18123');
    // a server named in the environment is not the stack's: its reader is itself, unless named too
    expect(endpoints({ TRAWL_HOME: home, CLICKHOUSE_URL: 'http://ch.example:8123/' }).clickhouseReadUrl).toBe('http://ch.example:8123');
    expect(endpoints({ TRAWL_HOME: home, CLICKHOUSE_URL: 'http://ch.example:8123', CLICKHOUSE_READ_URL: 'http://ro@ch.example:8123' }).clickhouseReadUrl).toBe('http://ro@ch.example:8123');
    expect(endpoints({ TRAWL_HOME: mkdtempSync(join(tmpdir(), 'trawl-endpoints-')) }).clickhouseReadUrl).toBe('http://127.0.0.1:8123');
  });
});

describe('service logs', () => {
  it('carry no password of a configured endpoint, whatever the log line quotes', async () => {
    const { createLogger } = await import('../logger.ts');
    const home = mkdtempSync(join(tmpdir(), 'trawl-log-'));
    const lines: string[] = [];
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = ((chunk: string) => {
      lines.push(String(chunk));
      return true;
    }) as typeof process.stdout.write;
    try {
      const logger = createLogger('test', { TRAWL_HOME: home, DATABASE_URL: 'postgres://trawl:pg-Secret-1@127.0.0.1:5432/trawl' });
      logger.error({ err: new Error('connect failed for postgres://trawl:pg-Secret-1@127.0.0.1:5432/trawl') }, 'start failed, password pg-Secret-1');
      logger.flush();
    } finally {
      process.stdout.write = write;
    }
    const out = lines.join('');
    expect(out).toContain('start failed');
    expect(out).not.toContain('pg-Secret-1');
    expect(out).toContain('postgres://trawl:***@127.0.0.1:5432/trawl');
  });
});
