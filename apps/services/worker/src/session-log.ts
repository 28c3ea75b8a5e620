/**
 * Where a worker keeps jobs' sessions (the crawl's SessionStore): the compacted topic
 * trawl.sessions, one SessionUpdated per change, keyed by `<job_id>:<session>`. Sessions are
 * state shared by every worker of a job (a job's hosts are spread over the fetch partitions, and a
 * partition moves to another worker when its owner dies), so they live in Kafka like the rest of
 * Trawl's state, not in one worker's memory nor in a table of their own.
 *
 * - Every worker reads the whole topic from the beginning and then live (subscribeTable: a
 *   throw-away group, nothing committed), keeping the highest version per session.
 * - A save is produced and acknowledged before the fetch that caused it produces its page's
 *   events, and the saver applies it to its own copy at once.
 * - The first time a worker uses a job's sessions it reads the topic up to its current end first
 *   (caughtUp): a worker taking over a dead one's partition sees the last state the dead one saved,
 *   so a session logged in before the crash is not logged in again.
 * - The cookie jar is sealed (SecretBox, TRAWL_SECRETS_KEY, bound to `session:<job_id>:<session>`):
 *   no cookie value is in clear in the topic, and a jar copied under another key does not open.
 *   Keys rotate as every sealed value does (TRAWL_SECRETS_OLD_KEYS opens the old ones; a session
 *   saved again is sealed under the current key, and the topic's records age out in 30 days).
 *
 * Two workers changing one session at the same moment (two of the job's hosts on two workers) both
 * write the next version; the later record wins and the other's change is lost — cookies of the
 * other host, set again by its next response. Logins are not lost that way: each host's worker sees
 * the session logged in (or logs in) before its first page.
 */
import { eventId, subscribeTable, TOPICS, type EventCodec, type EventProducer, type Logger, type TableSubscription } from '@trawl/streams';
import type { SessionState, SessionStore } from '@trawl/crawl';
import type { SessionUpdated } from '@trawl/schemas';
import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import type { SecretBox } from '@trawl/store/secrets';

export interface SessionLogOptions {
  readonly kafka: Kafka;
  readonly codec: EventCodec;
  readonly logger: Logger;
  readonly producer: Pick<EventProducer, 'emitEvent'>;
  /** The box jars are sealed with; made on first use, so that a worker whose jobs have no sessions needs no key. */
  readonly box: () => SecretBox;
  /** How long a first use waits for the topic to be read to its end (TRAWL_SESSION_CATCH_UP_MS). */
  readonly catchUpMs?: number;
  /** Jobs remembered as read up to date (LRU); default 10 000. */
  readonly maxJobs?: number;
  /** The topic; default trawl.sessions (tests use their own). */
  readonly topic?: string;
  /**
   * Sessions kept in memory (the least recently changed go first); default 100 000. One forgotten
   * here is not lost — it is on the topic — but this worker starts it afresh (a login again).
   */
  readonly maxSessions?: number;
}

/** The context a session's jar is sealed under: a jar opens only as the session it was saved for. */
export function sessionJarContext(jobId: string, session: number): string {
  return `session:${jobId}:${session}`;
}

export class SessionLog implements SessionStore {
  private readonly latest = new Map<string, SessionUpdated>();
  /** Tells apart two workers' records of the same version (two hosts of a job changing one session at once). */
  private readonly writer = randomUUID();
  private readonly readyJobs = new Set<string>();
  private table: TableSubscription | undefined;
  private starting: Promise<TableSubscription> | undefined;

  constructor(private readonly options: SessionLogOptions) {}

  async load(jobId: string, session: number): Promise<SessionState | undefined> {
    if (!this.readyJobs.has(jobId)) {
      const table = await this.subscription();
      await table.caughtUp(this.options.catchUpMs ?? 15_000);
      this.readyJobs.add(jobId);
      if (this.readyJobs.size > (this.options.maxJobs ?? 10_000)) this.readyJobs.delete(this.readyJobs.values().next().value!);
    }
    const record = this.latest.get(`${jobId}:${session}`);
    if (!record) return undefined;
    let jar: string;
    try {
      jar = this.options.box().open(record.jar, sessionJarContext(jobId, session));
    } catch (err) {
      // Sealed under a key no longer configured (or not a jar of this session): the session starts
      // afresh, with a version past the unreadable one so that its next save wins.
      this.options.logger.warn({ job_id: jobId, session, err: { message: (err as Error).message } }, 'a saved session does not open: started afresh');
      return { jobId, session, generation: record.generation, version: Number(record.version), jar: '', login: 'none', logins: record.logins, reason: 'unreadable' };
    }
    return {
      jobId,
      session,
      generation: record.generation,
      version: Number(record.version),
      jar,
      login: record.login === 'done' || record.login === 'failed' ? record.login : 'none',
      logins: record.logins,
      reason: record.reason,
    };
  }

  async save(state: SessionState, causationId: string | null): Promise<void> {
    const key = `${state.jobId}:${state.session}`;
    const event: SessionUpdated = {
      event_id: eventId('SessionUpdated', state.jobId, `${state.session}:${state.generation}:${state.version}:${this.writer}`),
      occurred_at: new Date(),
      causation_id: causationId,
      job_id: state.jobId,
      session: state.session,
      generation: state.generation,
      version: state.version,
      jar: this.options.box().seal(state.jar, sessionJarContext(state.jobId, state.session)),
      login: state.login,
      logins: state.logins,
      reason: state.reason,
    };
    await this.options.producer.emitEvent('SessionUpdated', event, { key, ...(this.options.topic ? { topic: this.options.topic } : {}) });
    this.apply(event);
  }

  /** Starts reading the topic; called at start-up so that the first job finds it read. */
  async start(): Promise<void> {
    await this.subscription();
  }

  async stop(): Promise<void> {
    await (this.table ?? (await this.starting?.catch(() => undefined)))?.stop();
  }

  private subscription(): Promise<TableSubscription> {
    if (this.table) return Promise.resolve(this.table);
    this.starting ??= subscribeTable({
      kafka: this.options.kafka,
      codec: this.options.codec,
      logger: this.options.logger,
      topic: this.options.topic ?? TOPICS.sessions,
      groupPrefix: 'trawl-worker-sessions',
      onRecord: (record) => {
        if (record.name === 'SessionUpdated') this.apply(record.value as SessionUpdated);
      },
    }).then((table) => (this.table = table));
    return this.starting;
  }

  private apply(event: SessionUpdated): void {
    const key = `${event.job_id}:${event.session}`;
    const known = this.latest.get(key);
    // Of two records of one version the later in the log wins, as compaction keeps it: every reader agrees.
    if (known && Number(event.version) < Number(known.version)) return;
    this.latest.delete(key);
    this.latest.set(key, event);
    if (this.latest.size > (this.options.maxSessions ?? 100_000)) this.latest.delete(this.latest.keys().next().value!);
  }
}
