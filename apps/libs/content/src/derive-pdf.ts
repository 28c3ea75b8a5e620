/**
 * Text and Markdown of a PDF, for a page whose answer is `application/pdf` (its text and markdown
 * formats). unpdf wraps Mozilla's PDF.js in a build made for servers and worker threads (no DOM,
 * no canvas, no worker of its own), so the text comes from the same engine Firefox shows PDFs
 * with. Only the first `maxPages` pages are read (TRAWL_PDF_MAX_PAGES): a PDF's cost grows with
 * its pages, and the worker runs this on a parse thread under the page's time limit. Links inside
 * the PDF are not followed.
 */
import { getDocumentProxy, getResolvedPDFJS } from 'unpdf';

export interface PdfOptions {
  /** Pages read, from the first; the rest are left out (and counted). */
  readonly maxPages: number;
}

export interface DerivedDocument {
  readonly title: string | null;
  readonly text: string;
  readonly markdown: string;
  /** Pages the document has. */
  readonly pages: number;
  /** Pages read (at most PdfOptions.maxPages). */
  readonly pagesRead: number;
}

interface TextItem {
  readonly str?: string;
  readonly hasEOL?: boolean;
}

/** A page's text, a line per line of the page as PDF.js breaks them. */
function pageText(items: readonly TextItem[]): string {
  let out = '';
  for (const item of items) {
    if (typeof item.str !== 'string') continue;
    out += item.str;
    if (item.hasEOL) out += '\n';
  }
  return out
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Loads PDF.js (~0.4 s, ~30 MB; seconds on a busy machine): a parse thread does it when it starts,
 * so that no page's time limit pays for it.
 */
export async function loadPdfEngine(): Promise<void> {
  await getResolvedPDFJS();
}

export async function derivePdf(data: Uint8Array, options: PdfOptions): Promise<DerivedDocument> {
  // PDF.js takes over the buffer it is given: it gets a copy, the caller's stays whole.
  // verbosity 0: PDF.js would print its warnings about broken documents on the worker's stderr.
  const pdf = await getDocumentProxy(new Uint8Array(data), { verbosity: 0 });
  try {
    const pagesRead = Math.min(pdf.numPages, options.maxPages);
    const pages: string[] = [];
    for (let n = 1; n <= pagesRead; n++) {
      const page = await pdf.getPage(n);
      pages.push(pageText((await page.getTextContent()).items as TextItem[]));
      page.cleanup();
    }
    const info = (await pdf.getMetadata().catch(() => null))?.info as { Title?: unknown } | undefined;
    const title = typeof info?.Title === 'string' && info.Title.trim() !== '' ? info.Title.trim() : null;
    const text = pages.filter((p) => p !== '').join('\n\n');
    const markdown = `${title ? `# ${title}\n\n` : ''}${text}\n`;
    return { title, text, markdown, pages: pdf.numPages, pagesRead };
  } finally {
    await pdf.destroy();
  }
}
