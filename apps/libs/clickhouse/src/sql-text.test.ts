import { describe, expect, it } from 'vitest';
import { checkDatabaseName, ident, quote, tsvField, uint } from './sql-text.ts';

describe('SQL text for ClickHouse without query parameters', () => {
  it('quotes strings so that no value can end the literal', () => {
    expect(quote(`it's \\ a\nb`)).toBe(`'it\\'s \\\\ a\\nb'`);
    expect(quote("shop.example' OR 1=1 --")).toBe("'shop.example\\' OR 1=1 --'");
    expect(quote('a\\')).toBe("'a\\\\'");
    expect(quote('x\\\'')).toBe("'x\\\\\\''");
    expect(quote('line\nbreak\ttab\r\u0000')).toBe("'line\\nbreak\\ttab\\r\\0'");
    expect(ident('we`ird')).toBe('`we\\`ird`');
  });

  it('escapes TabSeparated fields', () => {
    expect(tsvField('a\tb\nc\\d\re\u0000')).toBe('a\\tb\\nc\\\\d\\re\\0');
    expect(tsvField('plain ünïcødé')).toBe('plain ünïcødé');
  });

  it('renders only non-negative safe integers', () => {
    expect(uint(0)).toBe('0');
    expect(uint(42n)).toBe('42');
    expect(uint(1_795_000_000)).toBe('1795000000');
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 60, 1e21]) expect(() => uint(bad)).toThrow(TypeError);
    expect(() => uint(-1n)).toThrow(TypeError);
  });

  it('accepts only plain database names', () => {
    expect(checkDatabaseName('trawl_r1')).toBe('trawl_r1');
    expect(checkDatabaseName('trawl_e2e_1')).toBe('trawl_e2e_1');
    for (const bad of ['', 'a-b', 'x;DROP', '1abc', 'a`b', 'trawl; DROP']) expect(() => checkDatabaseName(bad)).toThrow(TypeError);
  });
});
