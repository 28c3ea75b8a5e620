import type { Admin, ITopicMetadata, Kafka } from 'kafkajs';
import { replicationConfigs, replicationFor, topicCatalogue, type TopicReplication, type TopicSpec } from './catalogue.ts';
import { ProvisioningError } from '../errors.ts';
import { ConfigResourceTypes } from '../kafka/kafkajs.ts';
import { createTopicsAndWait } from './create-topics.ts';

export interface ProvisionReport {
  readonly created: string[];
  readonly reconfigured: string[];
  readonly unchanged: string[];
  /** The cluster's size as provisioning counts it (see clusterSize) and the replication the catalogue chose for it. */
  readonly brokers: number;
  readonly replication: TopicReplication;
  /** Every catalogue topic's copies and effective `min.insync.replicas`, as the brokers report them. */
  readonly topics: Readonly<Record<string, TopicReplication>>;
  /**
   * Topics with fewer copies than the catalogue asks of this cluster (made when it was smaller):
   * provisioning never moves partitions; `kafka-reassign-partitions` does.
   */
  readonly underReplicated: string[];
}

const MIN_ISR = 'min.insync.replicas';

/**
 * Creates the catalogue's missing topics and brings configs of existing ones in line. Idempotent:
 * every service may call it at start-up. A topic with a different partition count is refused,
 * not altered, since adding partitions would re-route keys (job ids, hosts) mid-flight. The
 * replication factor and `min.insync.replicas` follow the cluster's size (replicationFor).
 */
export async function provisionTopics(kafka: Kafka, specs: readonly TopicSpec[] = topicCatalogue()): Promise<ProvisionReport> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await provisionWith(admin, specs);
  } finally {
    await admin.disconnect();
  }
}

/** Copies of a topic: its first partition's replica list (the catalogue makes every partition alike). */
function replicasOf(topic: { partitions: { replicas: number[] }[] }): number {
  return topic.partitions[0]?.replicas.length ?? 0;
}

/**
 * The brokers the cluster has: those registered and alive, or more when an existing topic has more
 * copies than that (a broker is down or restarting), so a service started during a broker's
 * restart neither plans fewer copies nor lowers `min.insync.replicas`.
 */
async function clusterSize(admin: Admin, existing: readonly string[]): Promise<{ brokers: number; meta: ITopicMetadata[] }> {
  const { brokers } = await admin.describeCluster();
  if (existing.length === 0) return { brokers: brokers.length, meta: [] };
  const { topics: meta } = await admin.fetchTopicMetadata({ topics: [...existing] });
  return { brokers: Math.max(brokers.length, ...meta.map(replicasOf)), meta };
}

async function provisionWith(admin: Admin, specs: readonly TopicSpec[]): Promise<ProvisionReport> {
  const listed = new Set(await admin.listTopics());
  const present = specs.filter((s) => listed.has(s.name));
  const missing = specs.filter((s) => !listed.has(s.name));
  const { brokers, meta } = await clusterSize(admin, present.map((s) => s.name));
  const replication = replicationFor(brokers);
  if (missing.length > 0) {
    await createTopicsAndWait(
      admin,
      missing.map((s) => ({
        topic: s.name,
        numPartitions: s.partitions,
        replicationFactor: replication.factor,
        configEntries: Object.entries({ ...s.configs, ...replicationConfigs(replication.factor) }).map(([name, value]) => ({ name, value })),
      })),
    );
  }
  const reconfigured: string[] = [];
  const underReplicated: string[] = [];
  if (present.length > 0) {
    const wanted = new Map<string, Record<string, string>>();
    for (const t of meta) {
      const spec = present.find((s) => s.name === t.name)!;
      if (t.partitions.length !== spec.partitions) {
        throw new ProvisioningError(
          `topic ${t.name} has ${t.partitions.length} partitions, the catalogue says ${spec.partitions}; ` +
            'change the catalogue (TRAWL_EVENT_PARTITIONS / TRAWL_FETCH_PARTITIONS) or recreate the topic',
        );
      }
      // By the copies the topic has, not the cluster's: two required of one copy would refuse every write.
      wanted.set(t.name, { ...spec.configs, ...replicationConfigs(replicasOf(t)) });
      if (replicasOf(t) < replication.factor) underReplicated.push(t.name);
    }
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: present.map((s) => ({ type: ConfigResourceTypes.TOPIC, name: s.name, configNames: Object.keys(wanted.get(s.name)!) })),
    });
    const drift = present.filter((s) => {
      const res = described.resources.find((r) => r.resourceName === s.name);
      return Object.entries(wanted.get(s.name)!).some(([k, v]) => res?.configEntries.find((e) => e.configName === k)?.configValue !== v);
    });
    if (drift.length > 0) {
      // alterConfigs replaces a topic's whole set of dynamic configs: always send all of them.
      await admin.alterConfigs({
        validateOnly: false,
        resources: drift.map((s) => ({
          type: ConfigResourceTypes.TOPIC,
          name: s.name,
          configEntries: Object.entries(wanted.get(s.name)!).map(([name, value]) => ({ name, value })),
        })),
      });
      reconfigured.push(...drift.map((s) => s.name));
    }
  }
  return {
    created: missing.map((s) => s.name),
    reconfigured,
    unchanged: present.map((s) => s.name).filter((n) => !reconfigured.includes(n)),
    brokers,
    replication,
    topics: await replicationOf(admin, specs.map((s) => s.name)),
    underReplicated,
  };
}

/** Each topic's copies and effective `min.insync.replicas` (the topic's own, else the broker's default). */
export async function replicationOf(admin: Admin, topics: readonly string[]): Promise<Record<string, TopicReplication>> {
  if (topics.length === 0) return {};
  const meta = await admin.fetchTopicMetadata({ topics: [...topics] });
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: [MIN_ISR] })),
  });
  const out: Record<string, TopicReplication> = {};
  for (const t of meta.topics) {
    const value = described.resources.find((r) => r.resourceName === t.name)?.configEntries.find((e) => e.configName === MIN_ISR)?.configValue;
    out[t.name] = { factor: replicasOf(t), minInsyncReplicas: Number(value ?? 1) };
  }
  return out;
}
