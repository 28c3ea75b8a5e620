import { describe, expect, it } from 'vitest';
import { splitStatements, schemaFiles, viewStatements, tableNames } from './analytics-schema.ts';

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
