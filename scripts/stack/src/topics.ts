/**
 * The catalogue's topics, created on the broker right after it is up, so that outside clients
 * (`kcat -L`) and every app see them before any app has started. Provisioning is the streams
 * package's (apps call it too at start-up); the stack only triggers and reports it.
 */
import { createKafka, endpoints, provisionTopics, replicationFor, topicCatalogue, type Logger } from '@trawl/streams';
import type { StackContext } from './context.ts';
import { errorMessage, PartStartError } from './errors.ts';
import type { PartStatus, PartUp } from './part.ts';
import { withTimeout } from './probe.ts';

const PART = 'topics';

function kafkaFor(ctx: StackContext, brokers: readonly string[], logger: Logger): ReturnType<typeof createKafka> {
  return createKafka({ clientId: 'trawl-stack', logger, endpoints: { ...endpoints(ctx.env), kafkaBrokers: brokers } });
}

export async function topicsUp(ctx: StackContext, brokers: readonly string[], logger: Logger): Promise<PartUp> {
  try {
    const report = await withTimeout(provisionTopics(kafkaFor(ctx, brokers, logger)), 60_000, 'provisioning topics');
    const total = report.created.length + report.reconfigured.length + report.unchanged.length;
    const changes = [
      report.created.length && `${report.created.length} created`,
      report.reconfigured.length && `${report.reconfigured.length} reconfigured`,
      report.underReplicated.length && `${report.underReplicated.length} with fewer copies than ${report.replication.factor}`,
    ].filter(Boolean);
    const copies = report.replication.factor > 1 ? `, replication ${report.replication.factor}, min ISR ${report.replication.minInsyncReplicas}` : '';
    return { part: PART, action: 'checked', endpoint: brokers.join(','), note: `${total} topics${copies}${changes.length ? `, ${changes.join(', ')}` : ''}` };
  } catch (err) {
    throw new PartStartError(PART, `provisioning the catalogue's topics failed: ${errorMessage(err)}`, 'read the message above; a partition-count mismatch needs the catalogue changed or the topic recreated', { cause: err });
  }
}

/** Whether every catalogue topic exists with its partition count and, on several brokers, the catalogue's copies. */
export async function topicsStatus(ctx: StackContext, brokers: readonly string[], logger: Logger): Promise<PartStatus> {
  const specs = topicCatalogue();
  const admin = kafkaFor(ctx, brokers, logger).admin();
  try {
    await withTimeout(admin.connect(), 5_000, 'connecting');
    const existing = new Set(await withTimeout(admin.listTopics(), 5_000, 'listing topics'));
    const present = specs.filter((s) => existing.has(s.name));
    const meta = present.length > 0 ? await withTimeout(admin.fetchTopicMetadata({ topics: present.map((s) => s.name) }), 5_000, 'topic metadata') : { topics: [] };
    const replication = replicationFor((await withTimeout(admin.describeCluster(), 5_000, 'describing the cluster')).brokers.length);
    const wrong = meta.topics.filter((t) => t.partitions.length !== specs.find((s) => s.name === t.name)?.partitions).map((t) => t.name);
    const few = meta.topics.filter((t) => (t.partitions[0]?.replicas.length ?? 0) < replication.factor).map((t) => t.name);
    // A follower still catching up (a broker just restarted) is out of sync, not a missing topic: said, not failed.
    const lagging = meta.topics.filter((t) => t.partitions.some((p) => p.isr.length < p.replicas.length)).length;
    const missing = specs.filter((s) => !existing.has(s.name)).map((s) => s.name);
    const ok = missing.length === 0 && wrong.length === 0 && few.length === 0;
    const copies = replication.factor > 1 ? `, replication ${replication.factor}` : '';
    const note = ok
      ? `${specs.length}/${specs.length} catalogue topics${copies}${lagging ? `, ${lagging} with a replica out of sync` : ''}`
      : [
          missing.length && `missing ${missing.join(', ')}`,
          wrong.length && `wrong partition count: ${wrong.join(', ')}`,
          few.length && `fewer than ${replication.factor} copies: ${few.join(', ')}`,
        ].filter(Boolean).join('; ');
    return { part: PART, state: ok ? 'up' : 'down', ours: false, endpoint: brokers.join(','), note };
  } catch (err) {
    return { part: PART, state: 'down', ours: false, endpoint: brokers.join(','), note: errorMessage(err) };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}
