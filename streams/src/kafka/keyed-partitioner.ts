/**
 * kafkajs's default partitioner (the Java client's murmur2 of the key, modulo the partition
 * count), remembering its answer per topic and key.
 *
 * Trawl's keys repeat: a job id for every event of a job, a host for every fetch of it. kafkajs
 * hashes the key again for every message, first copying it into a new Buffer and filtering the
 * partition list, which cost 3.5% of a producing process's CPU. The answer depends only on the
 * key and the partition count, so it is kept until the count changes; the memory is bounded by
 * forgetting everything past `maxKeys` keys. Messages without a string key, or with a partition
 * of their own, go to kafkajs's partitioner as they are.
 */
import type { ICustomPartitioner, PartitionerArgs } from 'kafkajs';
import { Partitioners } from './kafkajs.ts';

export function keyedPartitioner(maxKeys = 50_000): ICustomPartitioner {
  return () => {
    const murmur2 = Partitioners.DefaultPartitioner();
    const topics = new Map<string, { partitions: number; byKey: Map<string, number> }>();
    return (args: PartitionerArgs) => {
      const { topic, partitionMetadata, message } = args;
      if (typeof message.key !== 'string' || (message.partition !== undefined && message.partition !== null)) return murmur2(args);
      let known = topics.get(topic);
      if (!known || known.partitions !== partitionMetadata.length || known.byKey.size >= maxKeys) {
        known = { partitions: partitionMetadata.length, byKey: new Map() };
        topics.set(topic, known);
      }
      let partition = known.byKey.get(message.key);
      if (partition === undefined) {
        partition = murmur2(args);
        known.byKey.set(message.key, partition);
      }
      return partition;
    };
  };
}
