import { PDFDocument, StandardFonts } from 'pdf-lib';
import { DEFAULT_PARSE_LIMITS, RulesCache, type ParseJob } from '@trawl/crawl/parse';
import { sampleSpec } from '@trawl/schemas';
import { describe, expect, it } from 'vitest';
import { parseWork } from './parse-work.ts';

const filler = 'The lighthouse keeper writes down the weather every hour of the night. '.repeat(10);
const PAGE = `<!doctype html><html><head><title>Keeper's log</title></head><body>
<header><nav><a href="/">Home</a> <a href="/shop">Gift shop</a></nav></header>
<main><article><h1>Keeper's log</h1><p>${filler}</p><p>${filler}</p></article></main>
<aside>Subscribe to our newsletter</aside><footer>© Lighthouse trust</footer></body></html>`;

const job = (over: Partial<ParseJob>): ParseJob => ({
  html: PAGE, url: 'https://light.example/log', finalUrl: 'https://light.example/log', jobId: 'job-1',
  spec: { ...sampleSpec, item_root: null, item_fields: [], include_patterns: [], exclude_patterns: [], formats: ['text', 'markdown'] }, limits: DEFAULT_PARSE_LIMITS, ...over,
});

async function pdf(lines: readonly string[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([400, 300]);
  lines.forEach((line, i) => page.drawText(line, { x: 30, y: 250 - i * 20, size: 12, font }));
  return doc.save();
}

describe('parseWork', () => {
  const rules = new RulesCache(8);

  it('derives the main content alone with only_main_content: navigation, aside and footer go', async () => {
    const page = await parseWork(job({ derive: { mainContent: true } }), rules);
    expect(page.derived!.text).toContain('The lighthouse keeper writes down the weather');
    for (const boilerplate of ['Gift shop', 'newsletter', 'Lighthouse trust']) {
      expect(page.derived!.text).not.toContain(boilerplate);
      expect(page.derived!.markdown).not.toContain(boilerplate);
    }
    expect(page.links).toContain('https://light.example/shop');
  });

  it('derives the whole body by default, and nothing when the job keeps no text', async () => {
    const whole = await parseWork(job({ derive: { mainContent: false } }), rules);
    expect(whole.derived!.markdown).toContain('Gift shop');
    expect(whole.derived!.markdown).toContain('© Lighthouse trust');
    expect((await parseWork(job({}), rules)).derived).toBeNull();
  });

  it('gives a PDF\'s text, and no links or items', async () => {
    const data = await pdf(['Annual report 2026', 'Visitors: 12,345']);
    const page = await parseWork(job({ html: '', derive: { mainContent: false }, document: { mediaType: 'application/pdf', data, maxPages: 5 } }), rules);
    expect(page.derived!.text).toContain('Annual report 2026');
    expect(page.derived!.text).toContain('Visitors: 12,345');
    expect(page.derived).toMatchObject({ pages: 1, pagesRead: 1 });
    expect(page.links).toEqual([]);
    expect(page.items).toEqual([]);
  });

  it('gives no text for a PDF that cannot be read, without failing the page', async () => {
    const page = await parseWork(job({ html: '', document: { mediaType: 'application/pdf', data: new TextEncoder().encode('%PDF-1.4 broken'), maxPages: 5 } }), rules);
    expect(page.derived).toBeNull();
  });
});
