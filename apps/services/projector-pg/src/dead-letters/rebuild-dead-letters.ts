/**
 * Rebuilds `dead_letters` from the log: empties it and forgets its offsets in one transaction, and
 * moves the projection's consumer group back to the start of both dead-letter topics (they are
 * kept for ever), so the next start projects them again from offset 0. (Postgres's offsets alone
 * would not do: the projection seeks to them when a batch arrives, and a quiet dead-letter topic
 * sends none.) The projection must not be running meanwhile — a running one would go on from the
 * offset it holds in memory and leave a hole — so this refuses while its group has members. Steps:
 * stop projector-pg, rebuild, start it again. (A new DEAD_LETTER_VERSION does the same by itself:
 * a new name, offsets and group.)
 */
import type pg from 'pg';
import { consumerGroup, resetProjectionOffsets, type createKafka } from '@trawl/streams';
import { ProjectorPgError } from '../errors.ts';
import { deadLetterProjectionName } from './dead-letter-ddl.ts';
import { DEFAULT_DEAD_LETTER_TOPICS, type DeadLetterTopics } from './dead-letter-projector.ts';

type Kafka = ReturnType<typeof createKafka>;

/** Thrown when the dead-letter projection still runs: stop projector-pg first. */
export class DeadLettersInUseError extends ProjectorPgError {
  readonly code = 'PG_DEAD_LETTERS_IN_USE';
  readonly retriable = true;
}

export interface RebuildDeadLettersOptions {
  readonly pool: pg.Pool;
  readonly kafka: Kafka;
  /** The projection's group (default: runRawProjection's, under TRAWL_TOPIC_PREFIX). */
  readonly groupId?: string;
  readonly topics?: DeadLetterTopics;
}

export async function rebuildDeadLetters(options: RebuildDeadLettersOptions): Promise<{ removed: number }> {
  const name = deadLetterProjectionName();
  const groupId = options.groupId ?? consumerGroup(`trawl-projection-${name}`);
  const admin = options.kafka.admin();
  await admin.connect();
  try {
    const { groups } = await admin.describeGroups([groupId]);
    const members = groups[0]?.members.length ?? 0;
    if (members > 0) throw new DeadLettersInUseError(`the dead-letter projection is running (${members} member(s) in group ${groupId}): stop projector-pg first`);
    const committed = await admin.fetchOffsets({ groupId, topics: Object.values(options.topics ?? DEFAULT_DEAD_LETTER_TOPICS) });
    for (const { topic, partitions } of committed) {
      if (partitions.some((p) => p.offset !== '-1')) await admin.resetOffsets({ groupId, topic, earliest: true });
    }
  } finally {
    await admin.disconnect();
  }
  const client = await options.pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM dead_letters');
    await client.query('TRUNCATE dead_letters');
    await resetProjectionOffsets(client, name);
    await client.query('COMMIT');
    return { removed: rows[0]!.n };
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
