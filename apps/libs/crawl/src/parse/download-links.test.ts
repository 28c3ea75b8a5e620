import { describe, expect, it } from 'vitest';
import { downloadLinks, downloadTypeMatches, typeByExtension } from './download-links.ts';
import { loadHtml } from './load-html.ts';

const PAGE = `<html><body>
<a href="/files/report.pdf">Report</a> <a href="/files/report.pdf#page=2">again</a>
<a href="/about">About</a> <a href="mailto:x@y.z">mail</a>
<img src="logo.png"><img src="https://cdn.example/photo.JPG"><img src="data:image/png;base64,AAAA">
<object data="/files/plan.pdf"></object> <a href="/files/sheet.xlsx">sheet</a>
</body></html>`;

describe('downloadLinks', () => {
  const base = new URL('https://site.example/docs/index.html');

  it('finds linked and embedded files of the asked types by extension, once each, links first', () => {
    const urls = downloadLinks(loadHtml(PAGE), base, ['application/pdf', 'image/*'], 10);
    expect(urls).toEqual(['https://site.example/files/report.pdf', 'https://site.example/docs/logo.png', 'https://cdn.example/photo.JPG', 'https://site.example/files/plan.pdf']);
  });

  it('keeps to the types asked and to the maximum', () => {
    expect(downloadLinks(loadHtml(PAGE), base, ['application/pdf'], 10)).toEqual(['https://site.example/files/report.pdf', 'https://site.example/files/plan.pdf']);
    expect(downloadLinks(loadHtml(PAGE), base, ['image/*'], 1)).toEqual(['https://site.example/docs/logo.png']);
    expect(downloadLinks(loadHtml(PAGE), base, [], 10)).toEqual([]);
  });
});

describe('download types', () => {
  it('match exact types and wildcards, never a missing type', () => {
    expect(downloadTypeMatches(['image/*'], 'image/png')).toBe(true);
    expect(downloadTypeMatches(['application/pdf'], 'application/pdf')).toBe(true);
    expect(downloadTypeMatches(['application/pdf'], 'text/html')).toBe(false);
    expect(downloadTypeMatches(['image/*'], null)).toBe(false);
  });

  it('name a URL\'s type by its extension only', () => {
    expect(typeByExtension('https://a.example/x/file.pdf?v=2')).toBe('application/pdf');
    expect(typeByExtension('https://a.example/x.dir/file')).toBeNull();
    expect(typeByExtension('https://a.example/')).toBeNull();
  });
});
