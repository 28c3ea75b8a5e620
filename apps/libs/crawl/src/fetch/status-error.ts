import { HttpStatusError } from '../errors.ts';
import type { FetchResult } from './fetch-result.ts';

/**
 * The coded error for an error status (≥ 400), or null for a success. 5xx/408/429 are retriable and
 * carry Retry-After; other 4xx are not. For workers that record a failed page rather than a fetched one.
 */
export function statusError(result: FetchResult): HttpStatusError | null {
  if (result.status < 400) return null;
  return new HttpStatusError(`HTTP ${result.status} for ${result.finalUrl}`, result.status, result.retryAfterMs);
}
