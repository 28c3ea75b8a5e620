import { describe, expect, it } from 'vitest';
import { cachedDecoderCount, decodeBody } from './charset.ts';

const bytes = (s: string) => new TextEncoder().encode(s);

describe('decodeBody', () => {
  it('picks the BOM, then the header, then <meta charset>, else UTF-8', () => {
    expect(decodeBody(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0x69]), 'iso-8859-1')).toEqual({ text: 'hi', charset: 'utf-8' });
    expect(decodeBody(new Uint8Array([0xe9]), 'ISO-8859-1')).toEqual({ text: 'é', charset: 'windows-1252' });
    expect(decodeBody(bytes('<meta charset="windows-1251">'), null).charset).toBe('windows-1251');
    expect(decodeBody(bytes('<meta charset="utf-16">x'), null).charset).toBe('utf-8');
    expect(decodeBody(bytes('plain'), 'no-such-charset').charset).toBe('utf-8');
  });

  it('keeps decoders only for the labels the Encoding standard defines, whatever pages declare', () => {
    const before = cachedDecoderCount();
    for (let i = 0; i < 20_000; i++) {
      expect(decodeBody(bytes(`<meta charset="x-bogus-${i}">`), `made-up-${i}`).charset).toBe('utf-8');
    }
    expect(decodeBody(bytes('<p>'), ` ${'latin1'.padEnd(5_000, 'x')} `).charset).toBe('utf-8');
    for (const label of ['utf-8', 'UTF8', 'latin1', 'shift_jis', 'koi8-r', 'gbk', 'utf-16le']) decodeBody(bytes('a'), label);
    // The labels above, at most (each spelling is one entry), never the 40,000 unknown ones.
    expect(cachedDecoderCount() - before).toBeLessThanOrEqual(7);
  });
});
