import { describe, expect, it } from 'vitest';
import { DEFAULT_DOCUMENT_LIMITS, documentLimitsFromEnv } from './document-limits.ts';

describe('document limits', () => {
  it('read the environment, with defaults, refusing nonsense', () => {
    expect(documentLimitsFromEnv({})).toEqual(DEFAULT_DOCUMENT_LIMITS);
    expect(documentLimitsFromEnv({ TRAWL_PDF_MAX_BYTES: '1000', TRAWL_PDF_MAX_PAGES: '3', TRAWL_DOWNLOADS_MAX_BYTES: '5000' })).toEqual({ pdfMaxBytes: 1000, pdfMaxPages: 3, downloadMaxBytes: 5000 });
    expect(() => documentLimitsFromEnv({ TRAWL_PDF_MAX_PAGES: '0' })).toThrow(/TRAWL_PDF_MAX_PAGES/);
    expect(() => documentLimitsFromEnv({ TRAWL_DOWNLOADS_MAX_BYTES: 'lots' })).toThrow(/TRAWL_DOWNLOADS_MAX_BYTES/);
  });
});
