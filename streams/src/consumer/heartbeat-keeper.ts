/**
 * Heartbeats while work is in flight. kafkajs has no background heartbeat: it sends one between
 * batches only, so a consumer whose batch (or projection transaction) takes longer than the
 * session timeout is thrown out of the group. This timer calls the batch's `heartbeat()` (which
 * kafkajs itself throttles to the heartbeat interval) for as long as the owner says it is busy.
 * It runs only then: each batch (`use`) starts it, and a tick that finds the owner idle stops it
 * (an idle consumer heartbeats between its fetches, as kafkajs does).
 *
 * A heartbeat answered with "rebalance in progress" is reported to the owner, which uses it to
 * commit what it has finished before the partitions move.
 */
import type { Logger } from 'pino';

const REBALANCE_TYPES = new Set(['REBALANCE_IN_PROGRESS', 'ILLEGAL_GENERATION', 'UNKNOWN_MEMBER_ID', 'NOT_COORDINATOR_FOR_GROUP']);

export function isRebalanceError(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && REBALANCE_TYPES.has(type);
}

export class HeartbeatKeeper {
  private heartbeat: (() => Promise<void>) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private beating = false;

  constructor(
    private readonly intervalMs: number,
    private readonly busy: () => boolean,
    private readonly logger: Logger,
    private readonly onRebalance: () => void = () => {},
  ) {}

  private started = false;

  /** The latest batch's heartbeat function (it stays valid across batches of one member); work has come. */
  use(heartbeat: () => Promise<void>): void {
    this.heartbeat = heartbeat;
    this.arm();
  }

  start(): void {
    this.started = true;
    this.arm();
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (!this.started || this.timer) return;
    this.timer = setInterval(() => this.beat(), Math.max(100, Math.floor(this.intervalMs / 2)));
    this.timer.unref();
  }

  private beat(): void {
    if (!this.busy() && !this.beating) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    if (this.beating || !this.heartbeat) return;
    this.beating = true;
    this.heartbeat()
      .catch((err: unknown) => {
        if (isRebalanceError(err)) this.onRebalance();
        else this.logger.debug({ err }, 'heartbeat failed');
      })
      .finally(() => {
        this.beating = false;
      });
  }
}
