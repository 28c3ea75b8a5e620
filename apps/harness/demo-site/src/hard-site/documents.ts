/**
 * Documents and boilerplate, as real sites serve them: an article page wrapped in navigation, a
 * cookie banner, a sidebar and a footer (what `only_main_content` leaves out), a PDF report with
 * known text (made with pdf-lib, served as `application/pdf`), and two images with the same bytes
 * under two names (what a crawl's `downloads` stores once).
 *
 * - `/documents/` the article: links to the report and embeds both images
 * - `/documents/report.pdf` two pages of known text ({@link expectedDocuments.pdfText})
 * - `/documents/chart.png`, `/documents/chart-copy.png` one PNG, twice
 */
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { html } from '../serve.ts';
import type { HardSiteFeature } from './feature.ts';

/** What the feature serves, for tests to check against. */
export const expectedDocuments = {
  entry: '/documents/',
  pdfPath: '/documents/report.pdf',
  images: ['/documents/chart.png', '/documents/chart-copy.png'],
  /** Lines of the report, the first page's then the second's. */
  pdfText: ['Harbour traffic report 2026', 'Ships in: 1,204. Ships out: 1,198.', 'Second page: the north pier reopens in May.'],
  pdfTitle: 'Harbour traffic report',
  /** Text of the article itself. */
  articleText: 'The harbour master counted every ship that came in this year',
  /** Text of the page's navigation, banner, sidebar and footer: none of it is main content. */
  boilerplate: ['Accept all cookies', 'Subscribe to the newsletter', 'Harbour board · Privacy · Terms', 'Timetables'],
} as const;

/** A 1×1 PNG (8-bit greyscale). */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgABSK+kcQAAAABJRU5ErkJggg==', 'base64');

let report: Promise<Uint8Array> | undefined;

/** The report, made once per process. */
function reportPdf(): Promise<Uint8Array> {
  report ??= (async () => {
    const doc = await PDFDocument.create();
    doc.setTitle(expectedDocuments.pdfTitle);
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const [first, second, third] = expectedDocuments.pdfText;
    const p1 = doc.addPage([420, 300]);
    p1.drawText(first, { x: 30, y: 250, size: 16, font });
    p1.drawText(second, { x: 30, y: 220, size: 12, font });
    doc.addPage([420, 300]).drawText(third, { x: 30, y: 250, size: 12, font });
    return doc.save();
  })();
  return report;
}

const filler = `${expectedDocuments.articleText}, and wrote down its name, its flag and its cargo in the log. `.repeat(6);

const ARTICLE = `<!doctype html><html lang="en"><head><title>Harbour traffic</title></head><body>
<div class="cookie-banner">We use cookies. <button>Accept all cookies</button></div>
<header><nav><a href="/">Home</a> <a href="/documents/timetables">Timetables</a> <a href="/documents/contact">Contact</a></nav></header>
<main><article>
<h1>Harbour traffic in 2026</h1>
<p>${filler}</p>
<p>The full figures are in the <a href="/documents/report.pdf">annual report (PDF)</a>.</p>
<figure><img src="/documents/chart.png" alt="Ships per month"><figcaption>Ships per month</figcaption></figure>
<p>${filler}</p>
<img src="/documents/chart-copy.png" alt="The same chart again">
</article></main>
<aside><h2>Newsletter</h2><p>Subscribe to the newsletter for weekly tide tables.</p></aside>
<footer><p>Harbour board · Privacy · Terms</p></footer>
</body></html>`;

export const documents: HardSiteFeature = {
  prefix: '/documents/',
  entry: expectedDocuments.entry,
  async handle(_req, res, url) {
    const path = url.pathname;
    if (path === expectedDocuments.entry) return html(res, 200, ARTICLE);
    if (path === expectedDocuments.pdfPath) {
      const pdf = await reportPdf();
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(pdf.byteLength) }).end(Buffer.from(pdf));
      return;
    }
    if ((expectedDocuments.images as readonly string[]).includes(path)) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG.length) }).end(PNG);
      return;
    }
    html(res, 404, '<!doctype html><title>Not found</title>');
  },
};
