/**
 * Chaos, part 3 (`npm run test:chaos` only: about a minute): `stack up --brokers 3` in a temporary
 * TRAWL_HOME on free ports (the shared stack's Postgres, registry, ClickHouse and S3 given as
 * external endpoints, its broker untouched): three KRaft nodes, the catalogue's topics in three
 * copies with min.insync.replicas=2, a service's producer (startServiceProducer: acks=all,
 * idempotent, checked against the topics) writing while the leader of
 * trawl.pages-0 is killed with SIGKILL, and every acknowledged write found in the log once, after.
 * The quick, config-level checks of the same are scripts/stack/test/config-render.test.ts's.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  checkDelivery,
  createKafka,
  createLogger,
  endpoints,
  EVENT_DELIVERY,
  readTopics,
  replicationOf,
  startServiceProducer,
  topicCatalogue,
  TOPICS,
} from '@trawl/streams';
import { createContext, kafkaNodes, stackDown, stackUp, type UpStep } from '@trawl/stack';
import { report, freeRun } from './support.ts';

/** Whether something accepts connections on the port. */
function open(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setTimeout(1_000, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}



const home = mkdtempSync(join(tmpdir(), 'trawl-brokers3-'));
const logger = createLogger('brokers3-test', { ...process.env, TRAWL_LOG_LEVEL: process.env.TRAWL_LOG_LEVEL ?? 'silent' });
let env: NodeJS.ProcessEnv;
let base: number;
const figures: Record<string, number> = {};

function step(steps: readonly UpStep[], part: string): UpStep & { ok: true } {
  const s = steps.find((x) => x.part === part);
  if (!s) throw new Error(`no step for ${part}`);
  if (!s.ok) throw new Error(`${part}: ${s.error.message}\n${s.error.logTail ?? ''}`, { cause: s.error });
  return s as UpStep & { ok: true };
}

/**
 * A client of this test's cluster only, never of whatever KAFKA_BROKERS or a stack.env would name:
 * were `up` to fail, the writes must not land on the shared broker.
 */
function clusterKafka() {
  return createKafka({ clientId: 'brokers3-test', logger, endpoints: { ...endpoints(env), kafkaBrokers: [0, 2, 4].map((d) => `127.0.0.1:${base + d}`) } });
}

beforeAll(async () => {
  const shared = endpoints();
  base = await freeRun();
  env = {
    ...process.env,
    TRAWL_HOME: home,
    TRAWL_KAFKA_PORT: String(base),
    TRAWL_KAFKA_CONTROLLER_PORT: String(base + 1),
    KAFKA_BROKERS: '',
    SCHEMA_REGISTRY_URL: shared.schemaRegistryUrl,
    DATABASE_URL: shared.databaseUrl,
    CLICKHOUSE_URL: shared.clickhouseUrl,
    CLICKHOUSE_READ_URL: shared.clickhouseReadUrl,
    TRAWL_S3_URL: shared.s3Url,
  };
});

afterAll(async () => {
  report('brokers3 leader SIGKILL under acks=all writes', figures);
  if (env) await stackDown({ env });
  rmSync(home, { recursive: true, force: true });
});

describe('a three-broker KRaft cluster (`stack up --brokers 3`)', () => {
  it('starts three nodes on their own ports and private log directories, and writes their endpoints to stack.env', async () => {
    const report = await stackUp({ env, brokers: 3 });
    const kafka = step(report.steps, 'kafka');
    const topics = step(report.steps, 'topics');
    figures.startMs = Math.round(kafka.ms);
    figures.topicsMs = Math.round(topics.ms);
    expect(kafka.up.action).toBe('started');
    expect(topics.up.note).toMatch(/replication 3, min ISR 2/);
    const brokers = [0, 2, 4].map((d) => `127.0.0.1:${base + d}`);
    expect(endpoints({ TRAWL_HOME: home }).kafkaBrokers).toEqual(brokers);
    const nodes = kafkaNodes(createContext(env));
    expect(nodes.map((n) => [n.id, n.port, n.controllerPort])).toEqual([1, 2, 3].map((id) => [id, base + 2 * (id - 1), base + 1 + 2 * (id - 1)]));
    for (const n of nodes) {
      expect(n.pid).toBeGreaterThan(0);
      expect(statSync(n.dir).mode & 0o777).toBe(0o700);
      expect(statSync(n.data).mode & 0o077).toBe(0);
    }
  });

  it('creates the catalogue’s topics in three copies with min.insync.replicas=2, which EventProducer’s settings fit and acks=1 would not', async () => {
    const kafka = clusterKafka();
    const admin = kafka.admin();
    await admin.connect();
    try {
      const names = topicCatalogue().map((s) => s.name);
      const replication = await replicationOf(admin, names);
      expect(Object.keys(replication).sort()).toEqual([...names].sort());
      for (const name of names) expect(replication[name], name).toEqual({ factor: 3, minInsyncReplicas: 2 });
      const { topics } = await admin.fetchTopicMetadata({ topics: [TOPICS.pages] });
      for (const p of topics[0]!.partitions) {
        expect(p.replicas).toHaveLength(3);
        expect(p.isr).toHaveLength(3);
      }
      expect(checkDelivery(EVENT_DELIVERY, replication)).toEqual({ minInsyncReplicas: 2, minFactor: 3 });
      expect(() => checkDelivery({ ...EVENT_DELIVERY, acks: 1 }, replication)).toThrow(/acks=1 where min.insync.replicas > 1/);
    } finally {
      await admin.disconnect();
    }
  });

  it('keeps taking acks=all writes when a broker is killed (SIGKILL), and loses none it acknowledged', async () => {
    const kafka = clusterKafka();
    const admin = kafka.admin();
    await admin.connect();
    // As a service starts it: the catalogue provisioned, the producer's settings checked against it.
    const producer = await startServiceProducer({ kafka, logger, emits: [] });
    let stop = false;
    try {
      expect((await admin.describeCluster()).brokers.map((b) => b.port).sort()).toEqual([base, base + 2, base + 4]);
      const { topics } = await admin.fetchTopicMetadata({ topics: [TOPICS.pages] });
      const victimId = topics[0]!.partitions.find((p) => p.partitionId === 0)!.leader;
      const victim = kafkaNodes(createContext(env)).find((n) => n.id === victimId)!;
      const led = topics[0]!.partitions.filter((p) => p.leader === victimId).length;
      expect(victim.pid).toBeGreaterThan(0);

      // Batches of 60 keys (every partition) one after another, as EventProducer's callers send them.
      const acked = new Map<string, number>();
      const failures: unknown[] = [];
      let seq = 0;
      let killedAt = 0;
      let firstFullBatchAfterKill = 0;
      let lastAck = performance.now();
      let maxGapMs = 0;
      const writer = (async () => {
        while (!stop) {
          const sentAt = performance.now();
          const batch = Array.from({ length: 60 }, () => String(seq++));
          const results = await Promise.allSettled(batch.map((v, i) => producer.sendRaw({ topic: TOPICS.pages, key: `key-${i}`, value: Buffer.from(v) })));
          const now = performance.now();
          results.forEach((r, i) => (r.status === 'fulfilled' ? acked.set(batch[i]!, now) : failures.push(r.reason)));
          maxGapMs = Math.max(maxGapMs, now - lastAck);
          lastAck = now;
          if (killedAt && sentAt > killedAt && !firstFullBatchAfterKill && results.every((r) => r.status === 'fulfilled')) firstFullBatchAfterKill = now;
        }
      })();

      // The first write waits for a producer id and for every leader to be known: not part of the measure.
      const warm = Date.now() + 60_000;
      while (acked.size === 0 && failures.length === 0 && Date.now() < warm) await sleep(100);
      await sleep(2_000);
      const before = acked.size;
      expect(before).toBeGreaterThan(0);
      process.kill(victim.pid!, 'SIGKILL');
      killedAt = performance.now();
      const deadline = Date.now() + 60_000;
      while (!firstFullBatchAfterKill && Date.now() < deadline) await sleep(100);
      await sleep(3_000);
      stop = true;
      await writer;
      await producer.drain();

      figures.partitionsLedByKilled = led;
      figures.writesBeforeKill = before;
      figures.writesAcked = acked.size;
      figures.failoverMs = Math.round(firstFullBatchAfterKill - killedAt);
      figures.maxAckGapMs = Math.round(maxGapMs);
      expect(failures).toEqual([]);
      expect(firstFullBatchAfterKill, 'a write to every partition acknowledged after the kill').toBeGreaterThan(0);
      expect(acked.size).toBeGreaterThan(before);

      // Every partition led by a live broker, with two copies in sync: min.insync.replicas is still met.
      const after = (await admin.fetchTopicMetadata({ topics: [TOPICS.pages] })).topics[0]!.partitions;
      for (const p of after) {
        expect(p.leader).not.toBe(victimId);
        expect(p.isr).not.toContain(victimId);
        expect(p.isr.length).toBeGreaterThanOrEqual(2);
      }

      const log = await readTopics(kafka, [TOPICS.pages]);
      const counts = new Map<string, number>();
      for (const m of log) counts.set(m.value!.toString(), (counts.get(m.value!.toString()) ?? 0) + 1);
      const lost = [...acked.keys()].filter((v) => !counts.has(v));
      figures.duplicates = [...counts.values()].filter((c) => c > 1).length;
      figures.lost = lost.length;
      expect(lost).toEqual([]);
      // Idempotence: a write retried across the leader change is stored once.
      expect(figures.duplicates).toBe(0);
    } finally {
      stop = true;
      await producer.disconnect().catch(() => undefined);
      await admin.disconnect();
    }
  });

  it('`down` stops the two nodes left and frees every port', async () => {
    const t0 = performance.now();
    const steps = await stackDown({ env });
    figures.downMs = Math.round(performance.now() - t0);
    expect(steps.find((s) => s.part === 'kafka')?.action).toBe('stopped');
    for (const d of [0, 1, 2, 3, 4, 5]) expect(await open(base + d), `port ${base + d}`).toBe(false);
    expect(kafkaNodes(createContext(env)).every((n) => n.pid === undefined)).toBe(true);
  });
});
