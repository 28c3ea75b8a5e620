/**
 * What a worker reads of documents and linked files, set by the operator: a PDF page's bytes and
 * pages (its text is extracted on a parse thread, under the parse's time limit) and the largest
 * file a job's downloads may keep whatever its own `max_bytes` says.
 */
export interface DocumentLimits {
  /** A PDF larger than this is recorded unread, without text (TRAWL_PDF_MAX_BYTES). */
  readonly pdfMaxBytes: number;
  /** Pages of a PDF whose text is read, from the first (TRAWL_PDF_MAX_PAGES). */
  readonly pdfMaxPages: number;
  /** The ceiling of a job's `downloads.max_bytes` (TRAWL_DOWNLOADS_MAX_BYTES). */
  readonly downloadMaxBytes: number;
}

export const DEFAULT_DOCUMENT_LIMITS: DocumentLimits = { pdfMaxBytes: 20 * 1024 * 1024, pdfMaxPages: 200, downloadMaxBytes: 50 * 1024 * 1024 };

export function documentLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): DocumentLimits {
  const positive = (name: string, dflt: number) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return dflt;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`${name} must be a positive whole number, not ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    pdfMaxBytes: positive('TRAWL_PDF_MAX_BYTES', DEFAULT_DOCUMENT_LIMITS.pdfMaxBytes),
    pdfMaxPages: positive('TRAWL_PDF_MAX_PAGES', DEFAULT_DOCUMENT_LIMITS.pdfMaxPages),
    downloadMaxBytes: positive('TRAWL_DOWNLOADS_MAX_BYTES', DEFAULT_DOCUMENT_LIMITS.downloadMaxBytes),
  };
}
