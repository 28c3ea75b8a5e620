import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { derivePdf } from './derive-pdf.ts';

/** A PDF made with pdf-lib: one page per entry, each line of it drawn as a line of text. */
async function pdfOf(pages: readonly (readonly string[])[], title?: string): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  if (title) doc.setTitle(title);
  for (const lines of pages) {
    const page = doc.addPage([400, 400]);
    lines.forEach((line, i) => page.drawText(line, { x: 40, y: 350 - i * 20, size: 12, font }));
  }
  return doc.save();
}

describe('derivePdf', () => {
  it('gives the text of each page, and a Markdown with the title as its heading', async () => {
    const pdf = await pdfOf([['Tide table for the north pier', 'High water at 06:12'], ['Second page: low water at 12:30']], 'Harbour tides');
    const doc = await derivePdf(pdf, { maxPages: 10 });
    expect(doc.pages).toBe(2);
    expect(doc.pagesRead).toBe(2);
    expect(doc.title).toBe('Harbour tides');
    expect(doc.text).toContain('Tide table for the north pier');
    expect(doc.text).toContain('High water at 06:12');
    expect(doc.text).toContain('Second page: low water at 12:30');
    expect(doc.markdown.startsWith('# Harbour tides\n\n')).toBe(true);
    expect(doc.markdown).toContain('Second page: low water at 12:30');
  });

  it('reads no more than maxPages pages', async () => {
    const pdf = await pdfOf([['page one text'], ['page two text'], ['page three text']]);
    const doc = await derivePdf(pdf, { maxPages: 2 });
    expect(doc).toMatchObject({ pages: 3, pagesRead: 2, title: null });
    expect(doc.text).toContain('page two text');
    expect(doc.text).not.toContain('page three text');
  });

  it('leaves the caller\'s bytes whole', async () => {
    const pdf = await pdfOf([['kept']]);
    const length = pdf.byteLength;
    await derivePdf(pdf, { maxPages: 1 });
    expect(pdf.byteLength).toBe(length);
  });

  it('refuses bytes that are not a PDF', async () => {
    await expect(derivePdf(new TextEncoder().encode('<html>not a pdf</html>'), { maxPages: 1 })).rejects.toThrow();
  });
});
