import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEnvFile } from '@trawl/streams';
import { renderStackEnv, writeStackEnv } from '../src/env-file.ts';

describe('renderStackEnv', () => {
  it('writes the choices as sorted KEY=value lines that parseEnvFile reads back', () => {
    const text = renderStackEnv({}, { KAFKA_BROKERS: '127.0.0.1:19092', DATABASE_URL: 'postgres://postgres@127.0.0.1:5433/trawl' });
    expect(parseEnvFile(text)).toEqual({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5433/trawl', KAFKA_BROKERS: '127.0.0.1:19092' });
    expect(text.indexOf('DATABASE_URL')).toBeLessThan(text.indexOf('KAFKA_BROKERS'));
  });

  it('drops a key decided as undefined (back on its default) and keeps keys not decided', () => {
    const previous = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5433/trawl', KAFKA_BROKERS: '127.0.0.1:19092', SOMEONE_ELSES: 'x' };
    const next = parseEnvFile(renderStackEnv(previous, { DATABASE_URL: undefined }));
    expect(next).toEqual({ KAFKA_BROKERS: '127.0.0.1:19092', SOMEONE_ELSES: 'x' });
  });

  it('refuses a value that would break the line format', () => {
    expect(() => renderStackEnv({}, { DATABASE_URL: 'a\nB=c' })).toThrow(/line break/);
    expect(() => renderStackEnv({}, { 'not a name': 'x' })).toThrow(/not an environment variable name/);
  });
});

describe('writeStackEnv', () => {
  it('creates the file, and leaves it untouched when nothing changes', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'trawl-env-')), 'nested', 'stack.env');
    expect(writeStackEnv(file, { CLICKHOUSE_URL: 'http://127.0.0.1:18123' })).toBe(true);
    const before = statSync(file).mtimeMs;
    expect(writeStackEnv(file, { CLICKHOUSE_URL: 'http://127.0.0.1:18123' })).toBe(false);
    expect(statSync(file).mtimeMs).toBe(before);
    expect(parseEnvFile(readFileSync(file, 'utf8'))).toEqual({ CLICKHOUSE_URL: 'http://127.0.0.1:18123' });
  });

  it('merges with a file someone edited', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'trawl-env-')), 'stack.env');
    writeFileSync(file, '# mine\nTRAWL_API_PORT=3001\n');
    writeStackEnv(file, { KAFKA_BROKERS: '127.0.0.1:19092' });
    expect(parseEnvFile(readFileSync(file, 'utf8'))).toEqual({ TRAWL_API_PORT: '3001', KAFKA_BROKERS: '127.0.0.1:19092' });
  });
});
