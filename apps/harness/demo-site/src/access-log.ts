/** One request as the server saw it. */
export interface AccessEntry {
  readonly method: string;
  /** Path and query, as requested. */
  readonly path: string;
  /** The Host header: tells an off-host request (same server, other name) apart. */
  readonly host: string;
  /** Epoch milliseconds. */
  readonly time: number;
  /** The conditional request headers (the HTTP cache's revalidation), null when not sent. */
  readonly ifNoneMatch: string | null;
  readonly ifModifiedSince: string | null;
  /** The status answered; 0 until the response is finished. */
  readonly status: number;
  /** Bytes of the response on the wire, status line and headers included; 0 until it is finished. */
  readonly bytes: number;
}

/**
 * Every request a test server received, in order. Tests use it as the ground truth of "what did the
 * crawler actually fetch, how often", independent of anything the crawler reports about itself.
 */
export class AccessLog {
  private readonly list: AccessEntry[] = [];

  record(entry: AccessEntry): void {
    this.list.push(entry);
  }

  entries(): readonly AccessEntry[] {
    return this.list;
  }

  /** Requests of exactly this path (with query). */
  count(path: string): number {
    let n = 0;
    for (const e of this.list) if (e.path === path) n++;
    return n;
  }

  /** Paths requested more than once, with their counts. */
  duplicates(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const e of this.list) counts.set(e.path, (counts.get(e.path) ?? 0) + 1);
    for (const [p, n] of counts) if (n < 2) counts.delete(p);
    return counts;
  }

  clear(): void {
    this.list.length = 0;
  }
}
