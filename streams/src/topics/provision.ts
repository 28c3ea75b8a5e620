import type { Admin, Kafka } from 'kafkajs';
import { topicCatalogue, type TopicSpec } from './catalogue.ts';
import { ProvisioningError } from '../errors.ts';
import { ConfigResourceTypes } from '../kafka/kafkajs.ts';
import { createTopicsAndWait } from './create-topics.ts';

export interface ProvisionReport {
  readonly created: string[];
  readonly reconfigured: string[];
  readonly unchanged: string[];
}

/**
 * Creates the catalogue's missing topics and brings configs of existing ones in line. Idempotent:
 * every service may call it at start-up. A topic with a different partition count is refused,
 * not altered, since adding partitions would re-route keys (job ids, hosts) mid-flight.
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

async function provisionWith(admin: Admin, specs: readonly TopicSpec[]): Promise<ProvisionReport> {
  const existing = new Set(await admin.listTopics());
  const missing = specs.filter((s) => !existing.has(s.name));
  if (missing.length > 0) {
    await createTopicsAndWait(
      admin,
      missing.map((s) => ({
        topic: s.name,
        numPartitions: s.partitions,
        replicationFactor: -1,
        configEntries: Object.entries(s.configs).map(([name, value]) => ({ name, value })),
      })),
    );
  }
  const present = specs.filter((s) => existing.has(s.name));
  const reconfigured: string[] = [];
  if (present.length > 0) {
    const meta = await admin.fetchTopicMetadata({ topics: present.map((s) => s.name) });
    for (const t of meta.topics) {
      const spec = present.find((s) => s.name === t.name)!;
      if (t.partitions.length !== spec.partitions) {
        throw new ProvisioningError(
          `topic ${t.name} has ${t.partitions.length} partitions, the catalogue says ${spec.partitions}; ` +
            'change the catalogue (TRAWL_EVENT_PARTITIONS / TRAWL_FETCH_PARTITIONS) or recreate the topic',
        );
      }
    }
    const described = await admin.describeConfigs({
      includeSynonyms: false,
      resources: present.map((s) => ({ type: ConfigResourceTypes.TOPIC, name: s.name, configNames: Object.keys(s.configs) })),
    });
    const drift = present.filter((s) => {
      const res = described.resources.find((r) => r.resourceName === s.name);
      return Object.entries(s.configs).some(([k, v]) => res?.configEntries.find((e) => e.configName === k)?.configValue !== v);
    });
    if (drift.length > 0) {
      await admin.alterConfigs({
        validateOnly: false,
        resources: drift.map((s) => ({
          type: ConfigResourceTypes.TOPIC,
          name: s.name,
          configEntries: Object.entries(s.configs).map(([name, value]) => ({ name, value })),
        })),
      });
      reconfigured.push(...drift.map((s) => s.name));
    }
  }
  return {
    created: missing.map((s) => s.name),
    reconfigured,
    unchanged: present.map((s) => s.name).filter((n) => !reconfigured.includes(n)),
  };
}
