/**
 * The bench's in-process source: the same synthetic crawl as the bench topics, decoded events
 * with positions, generated in memory. It measures the live projector's write path (checks,
 * rows, inserts, views) without the Kafka client (see README, "Benchmark").
 */
import { syntheticJob, decoded } from '@trawl/streams/testing';
import type { PositionedEvent } from '../src/model/fact-rows.ts';

export function* inProcessBatches(total: number, batchSize: number, partitions = 6): Generator<PositionedEvent[]> {
  const next = new Map<string, bigint>();
  let produced = 0;
  let batch: PositionedEvent[] = [];
  for (let j = 0; produced < total; j++) {
    const partition = j % partitions;
    for (const e of syntheticJob(j, { jobs: 0, pagesPerJob: 500, seed: 42, runId: 'in-process', start: new Date(Date.now() - 3_600_000 + j * 1000) })) {
      const d = decoded(e);
      const topic = e.name.startsWith('Page') ? 'pages' : e.name === 'ItemExtracted' ? 'items' : 'jobs';
      const key = `${topic}:${partition}`;
      const offset = next.get(key) ?? 0n;
      next.set(key, offset + 1n);
      batch.push({ topic, partition, offset, name: d.name, value: d.value });
      produced++;
      if (batch.length >= batchSize) {
        yield batch;
        batch = [];
      }
    }
  }
  if (batch.length > 0) yield batch;
}
