/**
 * Postgres access talks to Postgres, never to Kafka: loading the store (any of its entry points)
 * must load no Kafka client and not the streams runtime, which patches kafkajs as it loads. What it
 * needs of the house (endpoints, the stack's env file, ids) comes from @trawl/base; importing
 * @trawl/streams again fails here.
 */
import { describe, expect, it } from 'vitest';
import { kafkaPackagesIn, modulesLoadedBy } from '@trawl/base/testing';

describe('loading @trawl/store', () => {
  it('loads no Kafka client and not the streams runtime', async () => {
    const loaded = await modulesLoadedBy(['@trawl/store', '@trawl/store/secrets', '@trawl/store/testing']);
    expect(loaded.packages).toContain('@trawl/store');
    expect(kafkaPackagesIn(loaded)).toEqual([]);
  });
});
