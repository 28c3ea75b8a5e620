import { describe, expect, it } from 'vitest';
import { DeliveryConfigError } from '../errors.ts';
import { replicationConfigs, replicationFor } from '../topics/catalogue.ts';
import { checkDelivery, EVENT_DELIVERY } from './delivery.ts';

describe('the catalogue’s replication by cluster size', () => {
  it('is one copy on one broker, three copies of which two hold each write on three or more', () => {
    expect([1, 2, 3, 5].map(replicationFor)).toEqual([
      { factor: 1, minInsyncReplicas: 1 },
      { factor: 2, minInsyncReplicas: 1 },
      { factor: 3, minInsyncReplicas: 2 },
      { factor: 3, minInsyncReplicas: 2 },
    ]);
    expect(() => replicationFor(0)).toThrow(/at least one broker/);
  });

  it('sets min.insync.replicas only on topics of three copies, leaving a one-broker topic as it was', () => {
    expect(replicationConfigs(1)).toEqual({});
    expect(replicationConfigs(2)).toEqual({});
    expect(replicationConfigs(3)).toEqual({ 'min.insync.replicas': '2' });
  });
});

describe('the producer’s settings against the topics', () => {
  const three = { 'trawl.pages': { factor: 3, minInsyncReplicas: 2 }, 'trawl.jobs': { factor: 3, minInsyncReplicas: 2 } };

  it('pass for EventProducer’s settings on one broker and on three', () => {
    expect(checkDelivery(EVENT_DELIVERY, { 'trawl.pages': { factor: 1, minInsyncReplicas: 1 } })).toEqual({ minInsyncReplicas: 1, minFactor: 1 });
    expect(checkDelivery(EVENT_DELIVERY, three)).toEqual({ minInsyncReplicas: 2, minFactor: 3 });
    expect(EVENT_DELIVERY).toMatchObject({ acks: -1, idempotent: true });
  });

  it('refuse acks below all or no idempotence where min.insync.replicas > 1, naming the topics', () => {
    expect(() => checkDelivery({ ...EVENT_DELIVERY, acks: 1 }, three)).toThrow(DeliveryConfigError);
    expect(() => checkDelivery({ ...EVENT_DELIVERY, acks: 1 }, three)).toThrow(/acks=1 where min.insync.replicas > 1 \(trawl.pages, trawl.jobs\)/);
    expect(() => checkDelivery({ ...EVENT_DELIVERY, idempotent: false }, three)).toThrow(/no idempotence/);
    // Where every write needs only the leader, acks=1 loses nothing a single copy would not.
    expect(() => checkDelivery({ ...EVENT_DELIVERY, acks: 1, idempotent: false }, { t: { factor: 1, minInsyncReplicas: 1 } })).not.toThrow();
  });

  it('refuse a topic that could never take an acks=all write, and too many requests in flight', () => {
    expect(() => checkDelivery(EVENT_DELIVERY, { 'trawl.items': { factor: 1, minInsyncReplicas: 2 } })).toThrow(/trawl.items has 1 copy and min.insync.replicas=2/);
    expect(() => checkDelivery({ ...EVENT_DELIVERY, maxInFlightRequests: 6 }, three)).toThrow(/maxInFlightRequests=6/);
  });
});
