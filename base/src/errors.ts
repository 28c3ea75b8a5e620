/**
 * The base of every Trawl error and the one verdict on a thrown value. `TrawlError` lives in
 * @trawl/schemas (the bottom layer, which throws it too) and is handed out here with the rest of
 * what every service needs; each package's errors extend it with a stable `code`, a `retriable`
 * flag and their `cause` (the streams runtime's `StreamsError`, `ContentError`, `CrawlError`, …).
 */
import { TrawlError } from '@trawl/schemas';

export { TrawlError };

/** Whether an arbitrary thrown value should be retried. Unknown errors are retried: safer to try again than to drop. */
export function isRetriable(err: unknown): boolean {
  if (err instanceof TrawlError) return err.retriable;
  if (err && typeof err === 'object' && 'retriable' in err && typeof (err as { retriable: unknown }).retriable === 'boolean') {
    return (err as { retriable: boolean }).retriable;
  }
  return true;
}
