/**
 * Topics of one test run: unique names, created with the admin and deleted afterwards, so tests
 * can run in parallel and again without meeting each other's messages or offsets.
 */
import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { createTopicsAndWait } from '../topics/create-topics.ts';

/** A short unique id: `<label>-<time>-<random>` (lowercase, Kafka- and SQL-safe). */
export function testId(label = 't'): string {
  return `${label}-${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
}

export interface TestTopicSpec {
  /** Base name; the created topic is `test.<run id>.<name>`. */
  readonly name: string;
  readonly partitions?: number;
  readonly configs?: Readonly<Record<string, string>>;
}

export interface TestTopics {
  /** `test.<run id>.`: every topic's (and so every registry subject's) prefix. */
  readonly prefix: string;
  /** The created names, by base name. */
  readonly names: Readonly<Record<string, string>>;
  /** The created names, in the order given. */
  readonly all: readonly string[];
  /** Deletes them (best effort: a test's failure should not hide behind a cleanup error). */
  delete(): Promise<void>;
}

export async function createTestTopics(kafka: Kafka, specs: readonly (string | TestTopicSpec)[], options: { readonly runId?: string; readonly partitions?: number } = {}): Promise<TestTopics> {
  const runId = options.runId ?? testId('run');
  const full = specs.map((s) => (typeof s === 'string' ? { name: s } : s));
  const names: Record<string, string> = {};
  const prefix = `test.${runId}.`;
  for (const s of full) names[s.name] = prefix + s.name;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(
      admin,
      full.map((s) => ({
        topic: names[s.name]!,
        numPartitions: s.partitions ?? options.partitions ?? 1,
        replicationFactor: -1,
        configEntries: Object.entries(s.configs ?? {}).map(([name, value]) => ({ name, value })),
      })),
    );
  } finally {
    await admin.disconnect();
  }
  const all = full.map((s) => names[s.name]!);
  return { prefix, names, all, delete: () => deleteTopics(kafka, all) };
}

export async function deleteTopics(kafka: Kafka, topics: readonly string[]): Promise<void> {
  if (topics.length === 0) return;
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.deleteTopics({ topics: [...topics], timeout: 10_000 });
  } catch {
    // best effort
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

/** The group's committed offsets of a topic, by partition (-1 when none). */
export async function committedOffsets(kafka: Kafka, groupId: string, topic: string): Promise<Map<number, bigint>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [entry] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return new Map((entry?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]));
  } finally {
    await admin.disconnect();
  }
}
