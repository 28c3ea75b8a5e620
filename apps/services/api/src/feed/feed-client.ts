/**
 * One WebSocket subscriber of the live feed, and the slow-client policy.
 *
 * The feed never waits for a client. `send` only queues bytes in the socket; when a client's
 * unsent data (`bufferedAmount`) is over the high-water mark, new events for it are DROPPED
 * (newest dropped, nothing queued) and counted; once it has drained below the mark it first gets
 * `{"type":"dropped","count":n}` so it knows its view has a hole (and can re-read
 * `/jobs/:id/status`), then events again. A client that stays over the mark for `slowCloseMs` is
 * closed with 1013 ("try again later"). So one slow reader costs at most the high-water mark of
 * memory and never delays Kafka consumption or any other client.
 *
 * While events are being dropped the client is also looked at every `recheckMs` without waiting
 * for the next event: the burst that overflowed it may have been the last one (its job's
 * JobCompleted among the dropped), and a client that caught up must still learn of its hole, and
 * one that never does must still be closed. (Found by test/load.test.ts: after a storm, a reader
 * that had caught up sat on a silent gap, and a stuck one stayed open.)
 */
import type { WebSocket } from 'ws';

export interface FeedFilter {
  /** Only these jobs (all of the user's when null). */
  readonly jobIds: ReadonlySet<string> | null;
  /** Only these event names (all when null). */
  readonly names: ReadonlySet<string> | null;
}

export interface FeedClientOptions {
  readonly highWaterBytes: number;
  readonly slowCloseMs: number;
  readonly onOutcome?: (outcome: 'sent' | 'dropped') => void;
  readonly now?: () => number;
  /** How often a client with dropped events is looked at between events (default 250 ms). */
  readonly recheckMs?: number;
}

/** The part of a WebSocket the policy needs; a real `ws` socket in production and tests. */
export type FeedSocket = Pick<WebSocket, 'send' | 'close' | 'bufferedAmount' | 'readyState'>;

const OPEN = 1;
export const CLOSE_TOO_SLOW = 1013;
/** The key the feed was opened with was revoked (4000-4999 are the application's; 4401 echoes HTTP 401). */
export const CLOSE_KEY_REVOKED = 4401;

export class FeedClient {
  private dropped = 0;
  private slowSince: number | undefined;
  private recheck: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    readonly userId: string,
    readonly filter: FeedFilter,
    private readonly socket: FeedSocket,
    private readonly options: FeedClientOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  wants(name: string, jobId: string): boolean {
    return (this.filter.names === null || this.filter.names.has(name)) && (this.filter.jobIds === null || this.filter.jobIds.has(jobId));
  }

  get droppedSinceNotice(): number {
    return this.dropped;
  }

  send(message: string): void {
    if (this.socket.readyState !== OPEN) return;
    if (this.overMark()) {
      this.dropped++;
      this.options.onOutcome?.('dropped');
      this.armRecheck();
      return;
    }
    this.socket.send(message);
    this.options.onOutcome?.('sent');
  }

  /** Over the mark: true (and closes the client once it has been for slowCloseMs). Under it: sends the pending notice. */
  private overMark(): boolean {
    if (this.socket.bufferedAmount > this.options.highWaterBytes) {
      const now = this.now();
      this.slowSince ??= now;
      if (now - this.slowSince >= this.options.slowCloseMs) this.socket.close(CLOSE_TOO_SLOW, 'too slow: events were being dropped');
      return true;
    }
    this.slowSince = undefined;
    if (this.dropped > 0) {
      this.socket.send(JSON.stringify({ type: 'dropped', count: this.dropped }));
      this.dropped = 0;
    }
    return false;
  }

  private armRecheck(): void {
    if (this.recheck) return;
    this.recheck = setTimeout(() => {
      this.recheck = undefined;
      if (this.socket.readyState !== OPEN || this.dropped === 0) return;
      if (this.overMark()) this.armRecheck();
    }, this.options.recheckMs ?? 250);
    this.recheck.unref?.();
  }
}
