import { describe, expect, it } from 'vitest';
import { globMatches, parseRobots } from './robots-parser.ts';

describe('parseRobots', () => {
  const txt = `
# comment
User-agent: *
Disallow: /private/
Allow: /private/public
Crawl-delay: 2

User-agent: Trawl/1.0
User-agent: other
Disallow: /no-trawl
Disallow: /*.pdf$
Allow: /no-trawl/ok
Crawl-delay: 0.5

Sitemap: https://e.com/sitemap.xml
`;

  it('picks the group naming our token over *', () => {
    const r = parseRobots(txt, 'trawl');
    expect(r.isAllowed('/private/x')).toBe(true);
    expect(r.isAllowed('/no-trawl/x')).toBe(false);
    expect(r.isAllowed('/no-trawl/ok/deeper')).toBe(true);
    expect(r.crawlDelayMs).toBe(500);
    expect(r.sitemaps).toEqual(['https://e.com/sitemap.xml']);
  });

  it('falls back to * for other agents', () => {
    const r = parseRobots(txt, 'somebot');
    expect(r.isAllowed('/private/x')).toBe(false);
    expect(r.isAllowed('/private/public/page')).toBe(true);
    expect(r.isAllowed('/no-trawl')).toBe(true);
    expect(r.crawlDelayMs).toBe(2000);
  });

  it('handles * and $ wildcards', () => {
    const r = parseRobots(txt, 'trawl');
    expect(r.isAllowed('/docs/a.pdf')).toBe(false);
    expect(r.isAllowed('/docs/a.pdf?x=1')).toBe(true);
    expect(r.isAllowed('/docs/a.pdfx')).toBe(true);
  });

  it('lets the longest match win, Allow on a tie', () => {
    const r = parseRobots('User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /a/b/c\nAllow: /t\nDisallow: /t\n', 'trawl');
    expect(r.isAllowed('/a/x')).toBe(false);
    expect(r.isAllowed('/a/b/x')).toBe(true);
    expect(r.isAllowed('/a/b/c')).toBe(false);
    expect(r.isAllowed('/t')).toBe(true);
  });

  it('allows everything for an empty Disallow, an empty file, or no matching group', () => {
    expect(parseRobots('User-agent: *\nDisallow:\n', 'trawl').isAllowed('/x')).toBe(true);
    expect(parseRobots('', 'trawl').isAllowed('/x')).toBe(true);
    expect(parseRobots('User-agent: googlebot\nDisallow: /\n', 'trawl').isAllowed('/x')).toBe(true);
  });

  it('always allows /robots.txt and matches percent-encoded paths consistently', () => {
    const r = parseRobots('User-agent: *\nDisallow: /\nAllow: /caf%c3%a9\n', 'trawl');
    expect(r.isAllowed('/robots.txt')).toBe(true);
    expect(r.isAllowed('/caf%C3%A9/menu')).toBe(true);
    expect(parseRobots('User-agent: *\nDisallow: /café\n', 'trawl').isAllowed('/caf%C3%A9')).toBe(false);
  });

  it('treats regex characters in paths literally', () => {
    const r = parseRobots('User-agent: *\nDisallow: /a.b?c=(1)\n', 'trawl');
    expect(r.isAllowed('/a.b?c=(1)')).toBe(false);
    expect(r.isAllowed('/axb?c=(1)')).toBe(true);
  });

  it('matches globs as a regex of their pattern would, piece by piece', () => {
    const glob = (p: string) => ({ pieces: (p.endsWith('$') ? p.slice(0, -1) : p).split('*'), anchored: p.endsWith('$') });
    const regex = (p: string) => new RegExp(`^${(p.endsWith('$') ? p.slice(0, -1) : p).replace(/[.+?^{}()|[\]\\$]/g, '\\$&').replace(/\*/g, '.*')}${p.endsWith('$') ? '$' : ''}`);
    const patterns = ['/', '/a', '/a$', '/*', '/*$', '/a*b', '/a*b$', '/*a*b*', '/*ab*ab$', '/a**b', '*.pdf$', '/x*', '/$'];
    const paths = ['/', '/a', '/ab', '/aab', '/abab', '/ba', '/a/b/ab', '/x.pdf', '/x.pdfx', '/abb', '/aXbYab'];
    for (const p of patterns) for (const path of paths) expect(globMatches(glob(p), path), `${p} on ${path}`).toBe(regex(p).test(path));
  });

  it('a hostile pattern costs time linear in the path (as a regex, 14 s for 200 characters)', () => {
    const r = parseRobots(`User-agent: *\nDisallow: /${'*a'.repeat(12)}*b$\n`, 'trawl');
    const started = performance.now();
    expect(r.isAllowed(`/${'a'.repeat(2_000)}`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
