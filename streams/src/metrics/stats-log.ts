/**
 * Periodic pino lines with a consumer's or projection's figures, for whoever reads logs rather
 * than dashboards. The rate is computed between two lines from a monotonic count.
 */
import type { Logger } from 'pino';

export interface StatsSource {
  /** A monotonic count of finished work (messages, events) used for the rate. */
  count(): number;
  /** What to log besides the rate. */
  snapshot(): object;
}

/** Logs every `intervalMs` (0 disables); returns a stopper. The timer never keeps the process alive. */
export function startStatsLog(logger: Logger, intervalMs: number, source: StatsSource, message = 'stream stats'): () => void {
  if (intervalMs <= 0) return () => {};
  let lastCount = source.count();
  let lastAt = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    const count = source.count();
    const perSecond = ((count - lastCount) * 1000) / Math.max(1, now - lastAt);
    lastCount = count;
    lastAt = now;
    logger.info({ ...source.snapshot(), perSecond: Math.round(perSecond * 10) / 10 }, message);
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
