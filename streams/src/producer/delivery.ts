/**
 * How the project's producers write, and the check of those settings against the topics' replication
 * at service start (issue 36). On a cluster where topics keep three copies and `min.insync.replicas`
 * is 2, a write is safe from the loss of one broker only when the producer waits for every in-sync
 * copy (acks=all) and is idempotent (a write retried across a leader change is stored once).
 */
import type { TopicReplication } from '../topics/catalogue.ts';
import { DeliveryConfigError } from '../errors.ts';

export interface DeliverySettings {
  /** -1: every in-sync replica (acks=all); 1: the leader alone; 0: nobody. */
  readonly acks: -1 | 0 | 1;
  readonly idempotent: boolean;
  /** Above 5 the broker cannot keep an idempotent producer's order (it tracks five batches per partition). */
  readonly maxInFlightRequests: number;
}

/** EventProducer's settings: every event, retry and dead-letter copy goes out with them. */
export const EVENT_DELIVERY: DeliverySettings = { acks: -1, idempotent: true, maxInFlightRequests: 5 };

export interface DeliveryCheck {
  /** The highest `min.insync.replicas` among the topics: the copies every acknowledged write is on. */
  readonly minInsyncReplicas: number;
  /** The fewest copies a topic has. */
  readonly minFactor: number;
}

/** Throws a DeliveryConfigError naming every topic the settings fall short of; returns what writes are guaranteed. */
export function checkDelivery(settings: DeliverySettings, topics: Readonly<Record<string, TopicReplication>>): DeliveryCheck {
  const problems: string[] = [];
  const entries = Object.entries(topics);
  const replicated = entries.filter(([, r]) => r.minInsyncReplicas > 1).map(([name]) => name);
  if (replicated.length > 0) {
    const list = `${replicated.slice(0, 3).join(', ')}${replicated.length > 3 ? ` and ${replicated.length - 3} more` : ''}`;
    if (settings.acks !== -1) problems.push(`acks=${settings.acks} where min.insync.replicas > 1 (${list}): a write acknowledged by the leader alone is lost with it; use acks=all (-1)`);
    if (!settings.idempotent) problems.push(`no idempotence where min.insync.replicas > 1 (${list}): a write retried across a leader change would be stored twice`);
  }
  if (settings.idempotent && settings.maxInFlightRequests > 5) problems.push(`maxInFlightRequests=${settings.maxInFlightRequests} with idempotence: the broker keeps the order of 5 at most`);
  for (const [name, r] of entries) {
    if (r.minInsyncReplicas > r.factor) problems.push(`${name} has ${r.factor} cop${r.factor === 1 ? 'y' : 'ies'} and min.insync.replicas=${r.minInsyncReplicas}: every acks=all write is refused`);
  }
  if (problems.length > 0) throw new DeliveryConfigError(`the producer's settings do not fit the topics: ${problems.join('; ')}`);
  return {
    minInsyncReplicas: Math.max(1, ...entries.map(([, r]) => r.minInsyncReplicas)),
    minFactor: entries.length > 0 ? Math.min(...entries.map(([, r]) => r.factor)) : 0,
  };
}
