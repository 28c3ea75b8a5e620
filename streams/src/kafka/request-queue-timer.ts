/**
 * kafkajs 2.2.4's request queue arms its throttle check `throttledUntil - Date.now()` ms ahead,
 * and `throttledUntil` is 0 until a broker throttles: a negative delay, which Node runs after 1 ms
 * and, since Node 24, also reports as a TimeoutNegativeWarning on stderr once per process
 * (kafkajs#1751, fixed upstream only in forks). This re-states that one method with the delay held
 * at 1 ms or more: the same timing, without the warning in every service's log.
 */
import { KAFKAJS_VERSION } from './fast-paths/install-fast-paths.ts';

const CHECK_PENDING_REQUESTS_INTERVAL = 10;

interface RequestQueueLike {
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  pending: unknown[];
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** Replaces RequestQueue#scheduleCheckPendingRequests when kafkajs is the version it restates; whether it did. */
export function clampRequestQueueTimer(require: NodeJS.Require): boolean {
  const { version } = require('kafkajs/package.json') as { version: string };
  if (version !== KAFKAJS_VERSION) return false;
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueLike };
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
    if (this.throttleCheckTimeoutId) return;
    let scheduleAt = this.throttledUntil - Date.now();
    if (this.pending.length > 0 && scheduleAt <= 0) scheduleAt = CHECK_PENDING_REQUESTS_INTERVAL;
    this.throttleCheckTimeoutId = setTimeout(() => {
      this.throttleCheckTimeoutId = null;
      this.checkPendingRequests();
    }, Math.max(1, scheduleAt));
  };
  return true;
}
