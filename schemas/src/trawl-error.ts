/**
 * The one base of Trawl's errors. Every error says what it is with a stable `code` (it lands in
 * PageFailed.error_code, in dead letters, in API bodies), whether the same work may succeed if it
 * is tried again (`retriable`: a retry tier or the dead-letter topic, a 503 or a 400), and keeps its
 * `cause`. Each package has its own subclasses, named by consequence (`RetriableError`,
 * `ContentStoreUnavailableError`), so callers branch on a class or a code, never on message text.
 *
 * It lives here, at the bottom of the house (`schemas` ← `streams` ← everything), so the pure
 * libraries that do not load Kafka (`@trawl/crawl`) share it too; `@trawl/streams` re-exports it.
 */
export abstract class TrawlError extends Error {
  abstract readonly code: string;
  abstract readonly retriable: boolean;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

