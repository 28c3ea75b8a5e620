/**
 * Turns a batch of positioned events into one TabSeparated body per fact table; page facts carry
 * their job's user when the memory knows it.
 */
import { FACT_TABLES, factRow, userOfEvent, type FactTable, type PositionedEvent } from './fact-rows.ts';

/** A bounded job → user memory: enough for the jobs in flight, never the whole history. */
export class UserMemory {
  private readonly users = new Map<string, string>();
  constructor(private readonly max = 100_000) {}

  remember(jobId: string, userId: string): void {
    if (this.users.has(jobId)) this.users.delete(jobId);
    this.users.set(jobId, userId);
    if (this.users.size > this.max) this.users.delete(this.users.keys().next().value!);
  }

  /** Learns the users a batch's job events name (also of events stored before and skipped now). */
  learn(events: readonly Pick<PositionedEvent, 'name' | 'value'>[]): void {
    for (const e of events) {
      const u = userOfEvent(e);
      if (u) this.remember(u.jobId, u.userId);
    }
  }

  get = (jobId: string): string | undefined => this.users.get(jobId);
}

export interface TsvBatch {
  readonly bodies: Readonly<Record<FactTable, string>>;
  readonly rows: Readonly<Record<FactTable, number>>;
}

/** `users` must already know the batch's own job events (UserMemory.learn, done once per batch by writeFacts). */
export function tsvBatch(events: readonly PositionedEvent[], users: UserMemory): TsvBatch {
  const parts: Record<FactTable, string[]> = { job_events: [], page_fetches: [], items: [] };
  for (const e of events) {
    const row = factRow(e, users.get);
    if (row) parts[row.table].push(row.line);
  }
  const bodies = {} as Record<FactTable, string>;
  const rows = {} as Record<FactTable, number>;
  for (const table of FACT_TABLES) {
    bodies[table] = parts[table].join('');
    rows[table] = parts[table].length;
  }
  return { bodies, rows };
}

const TABLE_OF: Readonly<Record<string, FactTable>> = {
  PageFetched: 'page_fetches', PageFailed: 'page_fetches', ItemExtracted: 'items',
  CrawlRequested: 'job_events', JobDispatched: 'job_events', JobCompleted: 'job_events', JobFailed: 'job_events', JobCancelled: 'job_events',
  JobPaused: 'job_events', JobResumed: 'job_events',
};

/** The fact table an event type goes to, if any. */
export function tableOf(name: string): FactTable | undefined {
  return TABLE_OF[name];
}
