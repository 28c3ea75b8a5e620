/**
 * The KafkaTopic resources of the deployment, generated from streams' topic catalogue — the same
 * list every service provisions at start-up — so the cluster's topics cannot drift from the code's.
 * The partition settings come from the deployment's own ConfigMap (what the services will run
 * with); every topic gets three replicas and min.insync.replicas=2, so an acknowledged write
 * (acks=all) is on two brokers and one broker may be down without a write refused.
 */
import { readFileSync } from 'node:fs';
import { catalogueOptions, TOPIC_PREFIX, topicCatalogue } from '@trawl/streams';
import { parseAllDocuments, stringify } from 'yaml';
import { CONFIG_FILE } from './paths.ts';

export const TOPIC_REPLICAS = 3;
export const TOPIC_MIN_INSYNC_REPLICAS = 2;
/** The Strimzi Kafka resource the topics belong to (base/kafka/kafka.yaml). */
export const KAFKA_CLUSTER = 'trawl';

/** The `data` of the ConfigMap trawl-config: what the services' catalogue options come from. */
export function deploymentEnv(file: string = CONFIG_FILE): Record<string, string> {
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as { kind?: string; metadata?: { name?: string }; data?: Record<string, string> });
  const config = docs.find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'trawl-config');
  if (!config) throw new Error(`${file} holds no ConfigMap trawl-config`);
  return config.data ?? {};
}

export interface KafkaTopicResource {
  readonly apiVersion: 'kafka.strimzi.io/v1';
  readonly kind: 'KafkaTopic';
  readonly metadata: { readonly name: string; readonly labels: Readonly<Record<string, string>> };
  readonly spec: {
    readonly topicName: string;
    readonly partitions: number;
    readonly replicas: number;
    readonly config: Readonly<Record<string, string | number>>;
  };
}

export function kafkaTopics(env: Readonly<Record<string, string>> = deploymentEnv()): KafkaTopicResource[] {
  // A prefix namespaces test pipelines' topics (TRAWL_TOPIC_PREFIX); the deployment's are unprefixed.
  if (env.TRAWL_TOPIC_PREFIX) throw new Error('the deployment sets TRAWL_TOPIC_PREFIX: its topics would not be the catalogue\'s');
  return topicCatalogue(catalogueOptions(env)).map((spec) => {
    const name = spec.name.slice(TOPIC_PREFIX.length);
    return {
      apiVersion: 'kafka.strimzi.io/v1',
      kind: 'KafkaTopic',
      metadata: { name, labels: { 'strimzi.io/cluster': KAFKA_CLUSTER, 'app.kubernetes.io/part-of': 'trawl' } },
      spec: {
        topicName: name,
        partitions: spec.partitions,
        replicas: TOPIC_REPLICAS,
        config: { ...spec.configs, 'min.insync.replicas': TOPIC_MIN_INSYNC_REPLICAS },
      },
    };
  });
}

const HEADER = [
  '# Generated from the topic catalogue (streams/src/topics/catalogue.ts) with the partition settings of',
  '# config.yaml by `npm run kubernetes -w @trawl/checks -- --write`; do not edit. `npm run lint` fails',
  '# when this file differs from what the catalogue says.',
].join('\n');

/** topics.yaml as the catalogue says it now. */
export function renderKafkaTopics(env?: Readonly<Record<string, string>>): string {
  return `${HEADER}\n${kafkaTopics(env).map((t) => stringify(t, { lineWidth: 0 })).join('---\n')}`;
}
