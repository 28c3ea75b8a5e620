/**
 * Two timers of kafkajs 2.2.4's request queue, restated.
 *
 * The pending-requests check. kafkajs re-arms it after every check, whether or not a request is
 * waiting: `checkPendingRequests` ends with `scheduleCheckPendingRequests`, whose timer calls
 * `checkPendingRequests`. Its delay is `throttledUntil - Date.now()`, negative unless a broker
 * throttles, which Node runs after 1 ms — so from its first response on, every connection of every
 * client ran a 1 ms timer for as long as it was open (a thousand wake-ups a second per connection,
 * an idle service's largest cost), and Node 24 reported the negative delay as a
 * TimeoutNegativeWarning (kafkajs#1751, fixed upstream only in forks). Restated, the check is armed
 * only while a request waits in the queue: at the end of the broker's throttle, or after 10 ms
 * while in-flight requests are at their limit. Nothing else adds to the queue, and a response
 * frees a slot and checks at once (RequestQueue#fulfillRequest), so no request waits longer.
 *
 * The request timeout check: see slowRequestTimeoutCheck.
 *
 * Upstream: both are changes to `src/network/requestQueue/index.js` (schedule the pending check
 * only while `pending` is not empty; a timeout timer at the earliest in-flight deadline instead of
 * a 100 ms interval), with test/request-queue-timer.test.ts as their test. They replace methods of
 * RequestQueue's prototype, on kafkajs 2.2.4 only (kafkajs-version.ts).
 */
import { requireKafkajsVersion } from './kafkajs-version.ts';

const CHECK_PENDING_REQUESTS_INTERVAL = 10;

interface RequestQueueLike {
  throttledUntil: number;
  throttleCheckTimeoutId: NodeJS.Timeout | null;
  pending: unknown[];
  checkPendingRequests(): void;
  scheduleCheckPendingRequests(): void;
}

/** Replaces RequestQueue#scheduleCheckPendingRequests; throws KafkajsVersionError when kafkajs is not the version it restates. */
export function clampRequestQueueTimer(require: NodeJS.Require): boolean {
  requireKafkajsVersion(require, 'the restated pending-requests timer (streams/src/kafka/request-queue-timer.ts)');
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: RequestQueueLike };
  RequestQueue.prototype.scheduleCheckPendingRequests = function scheduleCheckPendingRequests(this: RequestQueueLike) {
    if (this.throttleCheckTimeoutId || this.pending.length === 0) return;
    const throttledForMs = this.throttledUntil - Date.now();
    this.throttleCheckTimeoutId = setTimeout(
      () => {
        this.throttleCheckTimeoutId = null;
        this.checkPendingRequests();
      },
      throttledForMs > 0 ? throttledForMs : CHECK_PENDING_REQUESTS_INTERVAL,
    );
  };
  return true;
}

/**
 * How a connection looks for requests past their timeout. kafkajs 2.2.4 looks every 100 ms for
 * the whole life of every connection — each producer's, admin's and consumer's, busy or idle —
 * though no request of Trawl's times out in under 30 s (kafkajs's own `requestTimeout`, which a
 * fetch's shorter one never goes below: RequestQueue#push takes the larger). Ten wake-ups a second
 * per connection, and a client holds two or three: an idle service's largest cost once the
 * pending-requests check above was fixed. Restated, the look is a timer set for the moment the
 * earliest request in flight would time out (set again when a request is sent, moved sooner when
 * one has an earlier deadline, and again after each look), and none while nothing is in flight:
 * a timeout still fires on time, an idle connection is never woken, and one that always has a
 * fetch in flight (a resting consumer's) is woken once per request timeout.
 */
export const REQUEST_TIMEOUT_SLACK_MS = 10;

interface InFlight {
  sentAt: number;
  requestTimeout: number;
  timeoutRequest(): void;
}

interface TimeoutCheckingQueue {
  enforceRequestTimeout: boolean;
  requestTimeout: number;
  requestTimeoutIntervalId: NodeJS.Timeout | null;
  inflight: Map<unknown, InFlight>;
  /** Connected with timeouts enforced: a sent request arms the look (kafkajs has no such flag). */
  timeoutCheckWanted?: boolean;
  /** When the armed look runs (epoch ms). */
  timeoutCheckAt?: number;
  isConnected(): boolean;
  destroy(): void;
  sendSocketRequest(request: unknown): void;
  scheduleRequestTimeoutCheck(): void;
  armRequestTimeoutCheck(): void;
}

/** Restates the request queue's timeout check; throws KafkajsVersionError when kafkajs is not the version it restates. */
export function slowRequestTimeoutCheck(require: NodeJS.Require): boolean {
  requireKafkajsVersion(require, 'the restated request-timeout check (streams/src/kafka/request-queue-timer.ts)');
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as { prototype: TimeoutCheckingQueue };
  const proto = RequestQueue.prototype;
  const { sendSocketRequest, destroy } = proto;
  // kafkajs calls it once the connection is up.
  proto.scheduleRequestTimeoutCheck = function scheduleRequestTimeoutCheck(this: TimeoutCheckingQueue) {
    if (!this.enforceRequestTimeout) return;
    this.destroy();
    this.timeoutCheckWanted = true;
    this.armRequestTimeoutCheck();
  };
  proto.armRequestTimeoutCheck = function armRequestTimeoutCheck(this: TimeoutCheckingQueue) {
    if (!this.timeoutCheckWanted) return;
    let earliest = Infinity;
    this.inflight.forEach((request) => {
      earliest = Math.min(earliest, request.sentAt + request.requestTimeout);
    });
    if (this.requestTimeoutIntervalId && (this.timeoutCheckAt ?? Infinity) <= earliest) return;
    if (this.requestTimeoutIntervalId) clearTimeout(this.requestTimeoutIntervalId);
    this.requestTimeoutIntervalId = null;
    if (earliest === Infinity) return;
    this.timeoutCheckAt = earliest + REQUEST_TIMEOUT_SLACK_MS;
    this.requestTimeoutIntervalId = setTimeout(
      () => {
        this.requestTimeoutIntervalId = null;
        const now = Date.now();
        this.inflight.forEach((request) => {
          if (now - request.sentAt > request.requestTimeout) request.timeoutRequest();
        });
        if (!this.isConnected()) this.destroy();
        else this.armRequestTimeoutCheck();
      },
      Math.max(0, this.timeoutCheckAt - Date.now()),
    );
  };
  proto.sendSocketRequest = function sendAndArm(this: TimeoutCheckingQueue, request: unknown) {
    sendSocketRequest.call(this, request);
    this.armRequestTimeoutCheck();
  };
  // kafkajs's destroy clears the timer (at disconnect, or when the socket is found closed).
  proto.destroy = function destroyAndDisarm(this: TimeoutCheckingQueue) {
    destroy.call(this);
    this.requestTimeoutIntervalId = null;
    this.timeoutCheckWanted = false;
  };
  return true;
}
