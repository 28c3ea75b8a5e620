/**
 * The content store talks to S3, never to Kafka: loading it (any of its entry points) must load
 * no Kafka client and not the streams runtime, which patches kafkajs as it loads. What it needs of
 * the house (endpoints, redaction, the base error) comes from @trawl/base; importing @trawl/streams
 * again fails here.
 */
import { describe, expect, it } from 'vitest';
import { kafkaPackagesIn, modulesLoadedBy } from '@trawl/base/testing';

describe('loading @trawl/content', () => {
  it('loads no Kafka client and not the streams runtime', async () => {
    const loaded = await modulesLoadedBy(['@trawl/content', '@trawl/content/derive', '@trawl/content/testing']);
    expect(loaded.packages).toContain('@trawl/content');
    expect(kafkaPackagesIn(loaded)).toEqual([]);
  });
});
