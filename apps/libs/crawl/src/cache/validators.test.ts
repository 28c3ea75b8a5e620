import { describe, expect, it } from 'vitest';
import { conditionalHeaders, parseEtag, parseLastModified, revalidated, validatorsOf } from './validators.ts';

describe('ETag', () => {
  it('keeps strong and weak quoted tags as the site wrote them', () => {
    expect(parseEtag('"33a64df551425fcc55e4d42a148795d9f25f89d4"')).toBe('"33a64df551425fcc55e4d42a148795d9f25f89d4"');
    expect(parseEtag(' W/"0815" ')).toBe('W/"0815"');
    expect(parseEtag('""')).toBe('""');
  });

  it('keeps a bare token from servers that forget the quotes', () => {
    expect(parseEtag('abc-123')).toBe('abc-123');
  });

  it('drops what cannot be sent back safely: empty, lists, spaces, control characters, overlong', () => {
    for (const bad of [null, undefined, '', '   ', '"a", "b"', '"a b"', 'a b', 'x\r\nX-Evil: 1', '"x\u0000"', `"${'a'.repeat(300)}"`, '"unterminated']) {
      expect(parseEtag(bad), String(bad)).toBeNull();
    }
  });
});

describe('Last-Modified', () => {
  it('keeps the three HTTP date forms verbatim', () => {
    expect(parseLastModified('Sun, 06 Nov 1994 08:49:37 GMT')).toBe('Sun, 06 Nov 1994 08:49:37 GMT');
    expect(parseLastModified('Sunday, 06-Nov-94 08:49:37 GMT')).toBe('Sunday, 06-Nov-94 08:49:37 GMT');
    expect(parseLastModified('Sun Nov  6 08:49:37 1994')).toBe('Sun Nov  6 08:49:37 1994');
  });

  it('drops what is not an HTTP date', () => {
    for (const bad of [null, '', 'yesterday', '1994-11-06T08:49:37Z', 'Sun, 06 Nov 1994 08:49:37', 'Sun, 99 Nov 1994 08:49:37 GMT', 'Sun, 06 Nov 1994 08:49:37 GMT\r\nX: y']) {
      expect(parseLastModified(bad), String(bad)).toBeNull();
    }
  });
});

describe('validators of a response and conditional headers', () => {
  const headers = (h: Record<string, string>) => (name: string) => h[name] ?? null;

  it('reads both validators from the headers', () => {
    expect(validatorsOf(headers({ etag: '"v1"', 'last-modified': 'Sun, 06 Nov 1994 08:49:37 GMT' }))).toEqual({ etag: '"v1"', lastModified: 'Sun, 06 Nov 1994 08:49:37 GMT' });
    expect(validatorsOf(headers({}))).toEqual({ etag: null, lastModified: null });
  });

  it('sends both when both are known, one when one is, none without', () => {
    expect(conditionalHeaders({ etag: 'W/"v1"', lastModified: 'Sun, 06 Nov 1994 08:49:37 GMT' })).toEqual({ 'if-none-match': 'W/"v1"', 'if-modified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' });
    expect(conditionalHeaders({ etag: null, lastModified: 'Sun, 06 Nov 1994 08:49:37 GMT' })).toEqual({ 'if-modified-since': 'Sun, 06 Nov 1994 08:49:37 GMT' });
    expect(conditionalHeaders({ etag: '"v1"', lastModified: null })).toEqual({ 'if-none-match': '"v1"' });
    expect(conditionalHeaders({ etag: null, lastModified: null })).toEqual({});
  });

  it('checks stored values again before sending them (they come from an event)', () => {
    expect(conditionalHeaders({ etag: '"a"\r\nHost: evil', lastModified: 'not a date' })).toEqual({});
  });

  it('after a 304, takes the validators it carries and keeps the others', () => {
    const stored = { etag: '"v1"', lastModified: 'Sun, 06 Nov 1994 08:49:37 GMT' };
    expect(revalidated(stored, { etag: '"v2"', lastModified: null })).toEqual({ etag: '"v2"', lastModified: stored.lastModified });
    expect(revalidated(stored, { etag: null, lastModified: null })).toEqual(stored);
  });
});
