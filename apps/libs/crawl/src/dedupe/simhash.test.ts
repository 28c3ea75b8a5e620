import { describe, expect, it } from 'vitest';
import { hammingDistance, popcount32, simhash } from './simhash.ts';
import { mainText } from './main-text.ts';
import { loadHtml } from '../parse/load-html.ts';

const ARTICLE = Array.from({ length: 60 }, (_, i) => `Sentence ${i} tells how the harbour of the old town was rebuilt after the storm of the year ${1800 + i}.`).join(' ');

describe('simhash', () => {
  it('gives 64 bits as 16 hex digits, the same for the same words whatever the case and spacing', () => {
    const h = simhash(ARTICLE)!;
    expect(h).toMatch(/^[0-9a-f]{16}$/);
    expect(simhash(`  ${ARTICLE.toUpperCase().replaceAll(' ', '\n ')} `)).toBe(h);
  });

  it('moves a few bits for a small edit, about half of them for another text', () => {
    const edited = ARTICLE.replace('Sentence 30', 'Sentence thirty, printed,');
    expect(hammingDistance(simhash(ARTICLE)!, simhash(edited)!)).toBeLessThanOrEqual(3);
    const other = Array.from({ length: 60 }, (_, i) => `Recipe step ${i}: whisk ${i} eggs with sugar until pale and fold in the flour gently.`).join(' ');
    expect(hammingDistance(simhash(ARTICLE)!, simhash(other)!)).toBeGreaterThan(15);
  });

  it('has no hash for a text without words', () => {
    expect(simhash('')).toBeNull();
    expect(simhash(' — ! ')).toBeNull();
  });

  it('counts bits', () => {
    expect(popcount32(0)).toBe(0);
    expect(popcount32(-1)).toBe(32);
    expect(popcount32(0b1011)).toBe(3);
    expect(hammingDistance('ffffffff00000000', '0000000000000001')).toBe(33);
  });
});

describe('mainText', () => {
  it('reads <main> without navigation, scripts or forms, so a print view and the page agree', () => {
    const page = `<html><body><header>Shop</header><nav><a href="/?sid=1">Home</a></nav><main><h1>Kettle</h1><p>Boils water.</p><script>track()</script><form>Search</form></main><footer>(c)</footer></body></html>`;
    const print = `<html><body><main><h1>Kettle</h1><p>Boils water.</p></main></body></html>`;
    expect(mainText(loadHtml(page)).replace(/\s+/g, ' ').trim()).toBe('Kettle Boils water.');
    expect(simhash(mainText(loadHtml(page)))).toBe(simhash(mainText(loadHtml(print))));
  });

  it('reads the body when the page has no <main> or <article>, and stops at its bound', () => {
    expect(mainText(loadHtml('<body><aside>ad</aside><p>text</p></body>')).trim()).toBe('text');
    expect(mainText(loadHtml(`<p>${'a'.repeat(1000)}</p>`), 100)).toHaveLength(100);
  });
});
