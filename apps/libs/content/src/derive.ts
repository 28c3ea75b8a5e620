/**
 * What a parse thread loads (`@trawl/content/derive`): the text and Markdown derivations of HTML
 * pages and PDFs, without the S3 client, which a thread that only derives has no use for.
 */
export { derivePage, type DeriveOptions, type DerivedPage } from './derive-formats.ts';
export { derivePdf, loadPdfEngine, type DerivedDocument, type PdfOptions } from './derive-pdf.ts';
