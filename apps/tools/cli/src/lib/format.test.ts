import { describe, expect, it } from 'vitest';
import { printable } from './format.ts';

describe('printable', () => {
  it('removes what a terminal would act on and keeps one line one line', () => {
    expect(printable('\x1b]0;owned\x07\x1b[2Jtitle')).toBe(']0;owned[2Jtitle');
    expect(printable('a\x9b31mb\x7fc\x00d')).toBe('a31mbcd');
    expect(printable('evil\u202Etxt.exe\u2066x\u2069')).toBe('eviltxt.exex');
    expect(printable('line one\nINFO  forged\r\tline')).toBe('line one INFO  forged  line');
  });

  it('leaves ordinary text, accents and emoji alone', () => {
    expect(printable('Café — 5 items · 😀 http://e.com/a?b=1')).toBe('Café — 5 items · 😀 http://e.com/a?b=1');
  });
});
