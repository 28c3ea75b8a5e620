/**
 * The one catalogue of Trawl's topics: names, partition counts and configs. Provisioning creates
 * what is missing at start-up and checks what exists. Event topics are the source of truth: never
 * compacted, never expired.
 */

/** `state`: the latest record per key is what counts (compacted); every other role keeps each record. */
export type TopicRole = 'event' | 'command' | 'retry' | 'dead-letter' | 'state';

export interface TopicSpec {
  readonly name: string;
  readonly role: TopicRole;
  readonly partitions: number;
  /** What the message key is; documentation for readers, and checked by nothing. */
  readonly key: string;
  readonly configs: Readonly<Record<string, string>>;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Kept forever: event logs and dead letters. */
const FOREVER = { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' } as const;
/** Commands are work to do, not history: days are enough to survive an outage. */
const DAYS = { 'cleanup.policy': 'delete', 'retention.ms': String(7 * DAY_MS), 'retention.bytes': '-1' } as const;

/**
 * State kept by key, the latest record per key (trawl.sessions): compacted, and also deleted after
 * 30 days, so that the sessions of jobs long over go without tombstones. A job still running past
 * that loses its sessions' records: its sessions start again from the spec's cookies (a login again).
 */
const LATEST_BY_KEY = { 'cleanup.policy': 'compact,delete', 'retention.ms': String(30 * DAY_MS), 'retention.bytes': '-1', 'min.compaction.lag.ms': '0' } as const;

/**
 * `TRAWL_TOPIC_PREFIX` (default none) namespaces every topic: end-to-end tests run whole pipelines
 * of child processes on their own topics, so they cannot see, or be seen by, anything else on the
 * same broker. Read once, at start-up.
 */
export const TOPIC_PREFIX = process.env.TRAWL_TOPIC_PREFIX ?? '';

export const TOPICS = {
  schedule: `${TOPIC_PREFIX}trawl.schedule`,
  jobs: `${TOPIC_PREFIX}trawl.jobs`,
  pages: `${TOPIC_PREFIX}trawl.pages`,
  items: `${TOPIC_PREFIX}trawl.items`,
  fetch: `${TOPIC_PREFIX}trawl.fetch`,
  fetchDlq: `${TOPIC_PREFIX}trawl.fetch.dlq`,
  /** The webhook deliveries' retry tiers are `trawl.webhooks.retry.<n>`; this is where they end. */
  webhooks: `${TOPIC_PREFIX}trawl.webhooks`,
  webhooksDlq: `${TOPIC_PREFIX}trawl.webhooks.dlq`,
  /** Undecodable or unprocessable messages of the event topics, with their origin. */
  eventsDlq: `${TOPIC_PREFIX}trawl.events.dlq`,
  /** The sessions of jobs' pools (SessionUpdated), the latest per `<job_id>:<session>`: state, not history. */
  sessions: `${TOPIC_PREFIX}trawl.sessions`,
} as const;

export interface CatalogueOptions {
  /** Partitions of trawl.jobs, trawl.pages and trawl.items (co-partitioned by job id). */
  readonly eventPartitions: number;
  /** Partitions of trawl.fetch and its retry tiers (keyed by host). */
  readonly fetchPartitions: number;
  /** Delays of the fetch retry tiers, in ms; tier n is `trawl.fetch.retry.<n>`. */
  readonly fetchRetryDelaysMs: readonly number[];
  /** Delays of the webhook delivery retry tiers, in ms; tier n is `trawl.webhooks.retry.<n>`. */
  readonly webhookRetryDelaysMs: readonly number[];
}

export function catalogueOptions(env: NodeJS.ProcessEnv = process.env): CatalogueOptions {
  const int = (name: string, dflt: number): number => {
    const v = env[name];
    if (v === undefined || v === '') return dflt;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${v}"`);
    return n;
  };
  const delays = (name: string, dflt: string): number[] => {
    const list = (env[name] ?? dflt).split(',').map((s) => Number(s.trim()));
    if (list.length === 0 || list.some((d) => !Number.isFinite(d) || d < 0)) {
      throw new Error(`${name} must be a comma list of non-negative ms, got "${env[name]}"`);
    }
    return list;
  };
  return {
    eventPartitions: int('TRAWL_EVENT_PARTITIONS', 6),
    fetchPartitions: int('TRAWL_FETCH_PARTITIONS', 12),
    fetchRetryDelaysMs: delays('TRAWL_FETCH_RETRY_DELAYS_MS', '2000,30000,300000'),
    webhookRetryDelaysMs: delays('TRAWL_WEBHOOK_RETRY_DELAYS_MS', '5000,30000,120000,600000,1800000,7200000'),
  };
}

export function retryTopicName(topic: string, tier: number): string {
  return `${topic}.retry.${tier}`;
}

export function topicCatalogue(options: CatalogueOptions = catalogueOptions()): TopicSpec[] {
  const { eventPartitions, fetchPartitions, fetchRetryDelaysMs, webhookRetryDelaysMs } = options;
  return [
    { name: TOPICS.schedule, role: 'event', partitions: eventPartitions, key: 'target or schedule id', configs: FOREVER },
    { name: TOPICS.jobs, role: 'event', partitions: eventPartitions, key: 'job id', configs: FOREVER },
    { name: TOPICS.pages, role: 'event', partitions: eventPartitions, key: 'job id', configs: FOREVER },
    { name: TOPICS.items, role: 'event', partitions: eventPartitions, key: 'job id', configs: FOREVER },
    { name: TOPICS.fetch, role: 'command', partitions: fetchPartitions, key: 'URL host', configs: DAYS },
    ...fetchRetryDelaysMs.map((_, i) => ({
      name: retryTopicName(TOPICS.fetch, i + 1),
      role: 'retry' as const,
      partitions: fetchPartitions,
      key: 'URL host',
      configs: DAYS,
    })),
    { name: TOPICS.fetchDlq, role: 'dead-letter', partitions: fetchPartitions, key: 'URL host', configs: FOREVER },
    { name: TOPICS.eventsDlq, role: 'dead-letter', partitions: 1, key: 'original key', configs: FOREVER },
    // Webhook retries hold source events (jobs, items) keyed by job id, as the event topics.
    ...webhookRetryDelaysMs.map((_, i) => ({
      name: retryTopicName(TOPICS.webhooks, i + 1),
      role: 'retry' as const,
      partitions: eventPartitions,
      key: 'job id',
      configs: DAYS,
    })),
    { name: TOPICS.webhooksDlq, role: 'dead-letter', partitions: eventPartitions, key: 'job id', configs: FOREVER },
    { name: TOPICS.sessions, role: 'state', partitions: eventPartitions, key: 'job id:session index', configs: LATEST_BY_KEY },
  ];
}

/** How a topic is replicated: copies of each partition, and how many must hold a write before it is acknowledged. */
export interface TopicReplication {
  readonly factor: number;
  /** `min.insync.replicas`: with acks=all, a write fails (NOT_ENOUGH_REPLICAS) rather than land on fewer. */
  readonly minInsyncReplicas: number;
}

/**
 * The catalogue's replication on a cluster of `brokers`: one copy on one broker (the local stack's
 * default); on three or more, three copies of which two must hold every acknowledged write, so one
 * broker may be lost or restarted without refusing or losing a write. Two brokers get two copies
 * and accept a write on one: requiring both would stop every write while either restarts.
 */
export function replicationFor(brokers: number): TopicReplication {
  if (!Number.isInteger(brokers) || brokers < 1) throw new Error(`a cluster has at least one broker, got ${brokers}`);
  const factor = Math.min(brokers, 3);
  return { factor, minInsyncReplicas: factor >= 3 ? 2 : 1 };
}

/**
 * What a topic of `replicas` copies is configured with: `min.insync.replicas` only where there are
 * three copies or more, so a one-broker cluster's topics keep the broker's default (1) as they are,
 * and a topic made with fewer copies than its cluster now has is never set to refuse every write.
 */
export function replicationConfigs(replicas: number): Record<string, string> {
  return replicas >= 3 ? { 'min.insync.replicas': String(replicationFor(replicas).minInsyncReplicas) } : {};
}

/** A consumer group id in the same namespace as the topics (see TRAWL_TOPIC_PREFIX). */
export function consumerGroup(name: string): string {
  return `${TOPIC_PREFIX}${name}`;
}
