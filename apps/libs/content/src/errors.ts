import { TrawlError } from '@trawl/base';

/** The content store's errors: a code, whether trying again may help, and the cause. */
export class ContentError extends TrawlError {
  readonly code: string;
  readonly retriable: boolean;
  constructor(code: string, message: string, retriable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
    this.retriable = retriable;
  }
}

/** The store did not answer or refused: a fetch that stores its page is retried. */
export class ContentStoreUnavailableError extends ContentError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('TRAWL_CONTENT_STORE_UNAVAILABLE', message, true, options);
  }
}

/** No object has that hash (never stored, or deleted with its job's content). */
export class ContentNotFoundError extends ContentError {
  constructor(message: string) {
    super('TRAWL_CONTENT_NOT_FOUND', message, false);
  }
}
