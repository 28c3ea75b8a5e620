/**
 * Open streams per user (SSE log streams and WebSocket feeds together), per API instance. Each
 * stream holds a socket, a place in the live feed's fan-out or a log follower, and its heartbeats,
 * so one user opening thousands would take them from everyone else; past `max` the next is refused
 * (429 TOO_MANY_STREAMS) until one closes.
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(readonly max: number) {}

  count(userId: string): number {
    return this.open.get(userId) ?? 0;
  }

  /** A slot for one more stream of `userId` and its release (safe to call twice), or undefined when all are taken. */
  acquire(userId: string): (() => void) | undefined {
    const n = this.count(userId);
    if (n >= this.max) return undefined;
    this.open.set(userId, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.count(userId) - 1;
      if (left > 0) this.open.set(userId, left);
      else this.open.delete(userId);
    };
  }
}
