/**
 * kafkajs 2.2.4's producer send (`src/producer/sendMessages.js`), restated so that a leader change
 * in the middle of a send loses nothing.
 *
 * kafkajs remembers which *brokers* answered a send and, on a retry, sends only to brokers without
 * an answer. When a broker dies with a request in flight, its partitions move to brokers that had
 * already answered for other partitions of the same send: the retry skips them, and the send
 * resolves as if every message had been written (tulios/kafkajs#1303, open; PR #1798). On a
 * three-broker cluster that lost 15 of 60 acknowledged messages of the batch in flight when the
 * leader of two partitions was killed (apps/harness/e2e/test/chaos/brokers3.test.ts found it).
 *
 * Here the *partitions* that were acknowledged are remembered: a retry sends every other
 * partition to its current leader, whichever broker that is. Messages are grouped into partitions
 * once, so a retry never moves one between partitions (a key-less message's partition is chosen at
 * random), and a retry starts only once every request of the attempt before has settled, so a late
 * answer cannot race a resend under a new sequence number (which idempotence could not drop).
 *
 * Upstream: this is the fix kafkajs#1303 asks for, in `src/producer/sendMessages.js` (PR #1798
 * proposes one; kafkajs has merged nothing since 2023). It replaces that module whole, on kafkajs
 * 2.2.4 only (kafkajs-version.ts), and is proved by apps/harness/e2e/test/chaos/brokers3.test.ts.
 */
import { requireKafkajsVersion } from './kafkajs-version.ts';

type Anything = any; // eslint-disable-line @typescript-eslint/no-explicit-any

interface SendArgs {
  readonly acks: number;
  readonly timeout: number;
  readonly compression: unknown;
  readonly topicMessages: readonly { readonly topic: string; readonly messages: readonly unknown[] }[];
}

interface Deps {
  readonly logger: Anything;
  readonly cluster: Anything;
  readonly partitioner: Anything;
  readonly eosManager: Anything;
  readonly retrier: (fn: (bail: (e: unknown) => void, retryCount: number, retryTime: number) => Promise<unknown>) => Promise<unknown>;
}

const TARGET = 'kafkajs/src/producer/sendMessages.js';
const USED_BY = 'kafkajs/src/producer/messageProducer.js';
const MARK = Symbol.for('trawl.kafkajs-send-messages');

export interface SendMessagesStatus {
  readonly active: boolean;
  readonly reason?: string;
}

/** Puts the restated send in place of kafkajs's, before kafkajs's producer loads; says why not when it cannot, throws KafkajsVersionError on an unknown kafkajs. */
export function installSendMessages(require: NodeJS.Require): SendMessagesStatus {
  requireKafkajsVersion(require, 'the restated producer send (streams/src/kafka/send-messages.ts)');
  const path = require.resolve(TARGET);
  require(TARGET);
  const cached = require.cache[path]!;
  if ((cached.exports as { [MARK]?: true })[MARK]) return { active: true };
  if (require.cache[require.resolve(USED_BY)]) return { active: false, reason: `kafkajs's producer was loaded before its send was restated (${USED_BY})` };
  cached.exports = Object.assign(createSendMessages(require), { [MARK]: true });
  return { active: true };
}

function createSendMessages(require: NodeJS.Require) {
  const { KafkaJSMetadataNotLoaded } = require('kafkajs/src/errors') as Anything;
  const { staleMetadata } = require('kafkajs/src/protocol/error') as Anything;
  const createTopicData = require('kafkajs/src/producer/createTopicData') as Anything;
  const responseSerializer = require('kafkajs/src/producer/responseSerializer') as Anything;

  return ({ logger, cluster, partitioner, eosManager, retrier }: Deps) =>
    async ({ acks, timeout, compression, topicMessages }: SendArgs): Promise<unknown> => {
      // Loaded here, not above: the fast paths may replace it after this module is required.
      const groupMessagesPerPartition = require('kafkajs/src/producer/groupMessagesPerPartition') as Anything;
      /** topic → partition → its messages, fixed at the first attempt that has metadata. */
      const grouped = new Map<string, Record<number, unknown[]>>();
      /** `topic:partition` → the broker's answer for it (none with acks=0). */
      const acknowledged = new Map<string, unknown[]>();

      const attempt = async (): Promise<void> => {
        await cluster.refreshMetadataIfNecessary();
        const perLeader = new Map<number, { topic: string; partitions: number[]; messagesPerPartition: Record<number, unknown[]> }[]>();
        for (const { topic, messages } of topicMessages) {
          let messagesPerPartition = grouped.get(topic);
          if (!messagesPerPartition) {
            const partitionMetadata = cluster.findTopicPartitionMetadata(topic);
            if (partitionMetadata.length === 0) {
              logger.debug('Producing to topic without metadata', { topic, targetTopics: Array.from(cluster.targetTopics) });
              throw new KafkaJSMetadataNotLoaded('Producing to topic without metadata');
            }
            messagesPerPartition = groupMessagesPerPartition({ topic, partitionMetadata, messages, partitioner }) as Record<number, unknown[]>;
            grouped.set(topic, messagesPerPartition);
          }
          const pending = Object.keys(messagesPerPartition).map(Number).filter((p) => !acknowledged.has(`${topic}:${p}`));
          if (pending.length === 0) continue;
          const partitionsPerLeader = cluster.findLeaderForPartitions(topic, pending) as Record<string, number[]>;
          for (const [leader, partitions] of Object.entries(partitionsPerLeader)) {
            const list = perLeader.get(Number(leader)) ?? [];
            list.push({ topic, partitions, messagesPerPartition });
            perLeader.set(Number(leader), list);
          }
        }

        const results = await Promise.allSettled(
          [...perLeader].map(async ([nodeId, topicDataForBroker]) => {
            const broker = await cluster.findBroker({ nodeId });
            const topicData = createTopicData(topicDataForBroker) as { topic: string; partitions: { partition: number; messages: unknown[]; firstSequence?: number }[] }[];
            await eosManager.acquireBrokerLock(broker);
            try {
              if (eosManager.isTransactional()) await eosManager.addPartitionsToTransaction(topicData);
              for (const { topic, partitions } of topicData) {
                for (const entry of partitions) {
                  entry.firstSequence = eosManager.getSequence(topic, entry.partition);
                  eosManager.updateSequence(topic, entry.partition, entry.messages.length);
                }
              }
              let response: unknown;
              try {
                response = await broker.produce({
                  transactionalId: eosManager.isTransactional() ? eosManager.getTransactionalId() : undefined,
                  producerId: eosManager.getProducerId(),
                  producerEpoch: eosManager.getProducerEpoch(),
                  acks,
                  timeout,
                  compression,
                  topicData,
                });
              } catch (e) {
                for (const { topic, partitions } of topicData) for (const entry of partitions) eosManager.updateSequence(topic, entry.partition, -entry.messages.length);
                throw e;
              }
              const answers = (acks !== 0 ? responseSerializer(response) : []) as { topicName: string; partition: number }[];
              for (const { topic, partitions } of topicData) {
                for (const { partition } of partitions) {
                  acknowledged.set(`${topic}:${partition}`, answers.filter((a) => a.topicName === topic && a.partition === partition));
                }
              }
            } finally {
              await eosManager.releaseBrokerLock(broker);
            }
          }),
        );
        const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
        if (failed) throw failed.reason;
      };

      return retrier(async (bail, retryCount, retryTime) => {
        await cluster.addMultipleTargetTopics(topicMessages.map(({ topic }) => topic));
        try {
          await attempt();
          return [...acknowledged.values()].flat();
        } catch (e) {
          const err = e as Anything;
          if (err.name === 'KafkaJSConnectionClosedError') cluster.removeBroker({ host: err.host, port: err.port });
          if (!cluster.isConnected()) {
            logger.debug(`Cluster has disconnected, reconnecting: ${err.message}`, { retryCount, retryTime });
            await cluster.connect();
            await cluster.refreshMetadata();
            throw e;
          }
          if (
            staleMetadata(err) ||
            err.name === 'KafkaJSMetadataNotLoaded' ||
            err.name === 'KafkaJSConnectionError' ||
            err.name === 'KafkaJSConnectionClosedError' ||
            (err.name === 'KafkaJSProtocolError' && err.retriable)
          ) {
            logger.error(`Failed to send messages: ${err.message}`, { retryCount, retryTime });
            await cluster.refreshMetadata();
            throw e;
          }
          logger.error(`${err.message}`, { retryCount, retryTime });
          if (err.retriable) throw e;
          bail(e);
        }
      });
    };
}
