import { describe, expect, it } from 'vitest';
import { checkDatabaseName, ident, quote, tsvField, uint } from './sql-text.ts';
import { splitStatements, schemaFiles, viewStatements, tableNames } from '../schema/analytics-schema.ts';

describe('SQL text for ClickHouse without query parameters', () => {
  it('quotes strings so that no value can end the literal', () => {
    expect(quote(`it's \\ a\nb`)).toBe(`'it\\'s \\\\ a\\nb'`);
    expect(ident('we`ird')).toBe('`we\\`ird`');
  });

  it('escapes TabSeparated fields', () => {
    expect(tsvField('a\tb\nc\\d\re\u0000')).toBe('a\\tb\\nc\\\\d\\re\\0');
    expect(tsvField('plain ünïcødé')).toBe('plain ünïcødé');
  });

  it('refuses what is not an unsigned integer or a safe database name', () => {
    expect(uint(42n)).toBe('42');
    expect(() => uint(-1)).toThrow();
    expect(checkDatabaseName('trawl_r1')).toBe('trawl_r1');
    expect(() => checkDatabaseName('trawl; DROP')).toThrow();
  });
});

describe('the analytics DDL files', () => {
  it('split into statements without comments', () => {
    expect(splitStatements('-- c; here\nCREATE TABLE a (x UInt8) ENGINE = TinyLog;\n\nSELECT 1;')).toEqual(['CREATE TABLE a (x UInt8) ENGINE = TinyLog', 'SELECT 1']);
  });

  it('stay within what ClickHouse 18.16 understands', () => {
    const all = schemaFiles().flatMap((f) => f.statements).join('\n');
    for (const banned of [/DateTime64/, /LowCardinality/, /\bTTL\b/, /\{\w+:\w+\}/, /Nullable\(/]) expect(all).not.toMatch(banned);
    expect(tableNames()).toEqual(expect.arrayContaining(['page_fetches', 'items', 'job_events', 'projection_info', 'pages_by_minute', 'job_page_totals']));
    expect(viewStatements().map((v) => v.name)).toHaveLength(5);
  });
});
