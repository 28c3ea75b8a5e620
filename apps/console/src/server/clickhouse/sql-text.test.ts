import { describe, expect, it } from 'vitest';
import { checkDatabaseName, quote, uint } from './sql-text.ts';

describe('SQL text for ClickHouse 18.16', () => {
  it('quotes strings so that nothing escapes the literal', () => {
    expect(quote("shop.example' OR 1=1 --")).toBe("'shop.example\\' OR 1=1 --'");
    expect(quote('a\\')).toBe("'a\\\\'");
    expect(quote('x\\\'')).toBe("'x\\\\\\''");
    expect(quote('line\nbreak\ttab\r\u0000')).toBe("'line\\nbreak\\ttab\\r\\0'");
  });

  it('renders only non-negative safe integers', () => {
    expect(uint(0)).toBe('0');
    expect(uint(1_795_000_000)).toBe('1795000000');
    for (const bad of [-1, 1.5, Number.NaN, Infinity, 2 ** 60, 1e21]) expect(() => uint(bad)).toThrow(TypeError);
  });

  it('accepts only plain database names', () => {
    expect(checkDatabaseName('trawl_e2e_1')).toBe('trawl_e2e_1');
    for (const bad of ['', 'a-b', 'x;DROP', '1abc', 'a`b']) expect(() => checkDatabaseName(bad)).toThrow(TypeError);
  });
});
