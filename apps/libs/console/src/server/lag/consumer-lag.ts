/**
 * Consumer lag per group, the way `kafka-consumer-groups --describe` computes it: each partition's
 * high watermark minus the group's committed offset. The services keep richer figures
 * (`trawl_consumer_lag` in streams' metrics) but expose no HTTP endpoint, so the console asks
 * Kafka; group commits are periodic (about a second), so lag reads up to one interval high.
 * Projections (projector-pg, the frontier) keep their true position in Postgres
 * (`stream_offsets`), and are measured from there.
 *
 * Throw-away groups (topic readers, live feeds: a UUID in the id) are left out, as are groups not
 * named `trawl-…` and groups with no commit on this installation's topics (other prefixes, other
 * tests on the broker).
 */
import { TOPIC_PREFIX, type createKafka } from '@trawl/streams';
import type { Pool } from '@trawl/store';

type Kafka = ReturnType<typeof createKafka>;

export interface TopicLag {
  readonly topic: string;
  readonly lag: number;
  readonly partitions: number;
}

export interface GroupLag {
  readonly group: string;
  /** `consumer-group`: Kafka's committed offsets; `projection`: Postgres `stream_offsets`. */
  readonly kind: 'consumer-group' | 'projection';
  /** Kafka's group state (Stable, Empty, …); null for projections. */
  readonly state: string | null;
  readonly members: number | null;
  readonly lag: number;
  readonly topics: TopicLag[];
}

const THROWAWAY = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/**
 * Trawl's groups are named `trawl-…`, in the topic namespace where they use `consumerGroup()`.
 * Asking only those for offsets keeps a busy broker (many other groups) cheap to measure.
 */
export function isTrawlGroup(groupId: string, prefix: string = TOPIC_PREFIX): boolean {
  return !THROWAWAY.test(groupId) && (groupId.startsWith(`${prefix}trawl-`) || groupId.startsWith('trawl-'));
}

/** Partition → next offset to be written, per topic. */
export type HighWatermarks = ReadonlyMap<string, ReadonlyMap<number, bigint>>;

/** Sums a group's lag from its committed offsets (-1: nothing committed → from the log start). */
export function lagOf(
  committed: readonly { topic: string; partitions: readonly { partition: number; offset: string }[] }[],
  highs: HighWatermarks,
  lows: HighWatermarks,
): TopicLag[] {
  const out: TopicLag[] = [];
  for (const { topic, partitions } of committed) {
    if (!partitions.some((p) => BigInt(p.offset) >= 0n)) continue; // the group does not read this topic
    let lag = 0n;
    for (const p of partitions) {
      const high = highs.get(topic)?.get(p.partition) ?? 0n;
      const at = BigInt(p.offset) >= 0n ? BigInt(p.offset) : (lows.get(topic)?.get(p.partition) ?? 0n);
      if (high > at) lag += high - at;
    }
    out.push({ topic, lag: Number(lag), partitions: partitions.length });
  }
  return out;
}

export async function consumerLag(kafka: Kafka, db: Pool | undefined, topics: readonly string[]): Promise<GroupLag[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const ours = topics.filter((t) => existing.has(t));
    const highs = new Map<string, Map<number, bigint>>();
    const lows = new Map<string, Map<number, bigint>>();
    for (const topic of ours) {
      const offsets = await admin.fetchTopicOffsets(topic);
      highs.set(topic, new Map(offsets.map((o) => [o.partition, BigInt(o.high)])));
      lows.set(topic, new Map(offsets.map((o) => [o.partition, BigInt(o.low)])));
    }
    const { groups } = await admin.listGroups();
    const candidates = groups.filter((g) => g.protocolType === 'consumer' && isTrawlGroup(g.groupId)).map((g) => g.groupId);
    const described = candidates.length ? (await admin.describeGroups(candidates)).groups : [];
    const out: GroupLag[] = [];
    for (const g of described) {
      const committed = await admin.fetchOffsets({ groupId: g.groupId, topics: ours });
      const topicLags = lagOf(committed, highs, lows);
      if (topicLags.length === 0) continue;
      out.push({
        group: g.groupId,
        kind: 'consumer-group',
        state: g.state,
        members: g.members.length,
        lag: topicLags.reduce((s, t) => s + t.lag, 0),
        topics: topicLags,
      });
    }
    if (db) out.push(...(await projectionLag(db, highs)));
    return out.sort((a, b) => b.lag - a.lag || a.group.localeCompare(b.group));
  } finally {
    await admin.disconnect();
  }
}

/** Lag of the Postgres projections on these topics, from `stream_offsets`. */
async function projectionLag(db: Pool, highs: HighWatermarks): Promise<GroupLag[]> {
  let rows: { projection: string; topic: string; partition: number; next_offset: string }[];
  try {
    ({ rows } = await db.query('SELECT projection, topic, partition, next_offset::text AS next_offset FROM stream_offsets'));
  } catch (err) {
    if ((err as { code?: string }).code === '42P01') return []; // no projection has run against this database
    throw err;
  }
  const byProjection = new Map<string, { topic: string; partitions: { partition: number; offset: string }[] }[]>();
  for (const r of rows.filter((r) => highs.has(r.topic))) {
    const topicsOf = byProjection.get(r.projection) ?? byProjection.set(r.projection, []).get(r.projection)!;
    const entry = topicsOf.find((t) => t.topic === r.topic) ?? (topicsOf.push({ topic: r.topic, partitions: [] }), topicsOf[topicsOf.length - 1]!);
    entry.partitions.push({ partition: r.partition, offset: r.next_offset });
  }
  return [...byProjection].map(([projection, committed]) => {
    // A partition never applied has no row: count it from the start of the log.
    const complete = committed.map((c) => ({
      topic: c.topic,
      partitions: [...(highs.get(c.topic)?.keys() ?? [])].map((p) => c.partitions.find((x) => x.partition === p) ?? { partition: p, offset: '0' }),
    }));
    const topicLags = lagOf(complete, highs, new Map());
    return { group: projection, kind: 'projection' as const, state: null, members: null, lag: topicLags.reduce((s, t) => s + t.lag, 0), topics: topicLags };
  });
}
