/** The vocabulary shared by every part of the stack and its reports. */

export const PART_NAMES = ['postgres', 'kafka', 'registry', 'clickhouse', 's3', 'chromium', 'topics'] as const;
export type PartName = (typeof PART_NAMES)[number];

/**
 * How a part came to be up:
 * - `started`: this `up` started it;
 * - `reused`: the stack had started it earlier and it is still healthy;
 * - `external`: something else runs it (an endpoint from the environment, a system service, a
 *   server already on the port); the stack uses it and `down` leaves it alone;
 * - `checked`: nothing to run (Chromium is a program, topics are provisioned).
 */
export type UpAction = 'started' | 'reused' | 'external' | 'checked';

export interface PartUp {
  readonly part: PartName;
  readonly action: UpAction;
  readonly endpoint: string;
  readonly pid?: number;
  /** A short human note: a version, "created database trawl", "14 topics, 2 created". */
  readonly note?: string;
  /**
   * Endpoint variables this part decided, for TRAWL_HOME/stack.env: a value that differs from the
   * default (a private Postgres on 5433) is written so every app and test finds it; `undefined`
   * drops a line left by an earlier `up`.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export type PartState = 'up' | 'down' | 'unhealthy';

export interface PartStatus {
  readonly part: PartName;
  readonly state: PartState;
  /** True when the stack started it (a pid file under TRAWL_HOME/run names it). */
  readonly ours: boolean;
  readonly endpoint: string;
  readonly pid?: number;
  /** Memory of the process tree in MB (proportional set size, so shared pages count once). */
  readonly rssMb?: number;
  readonly note?: string;
}

export type PartDown =
  | { readonly part: PartName; readonly action: 'stopped'; readonly pid: number; readonly killed: boolean }
  | { readonly part: PartName; readonly action: 'not-running' | 'not-ours' };
