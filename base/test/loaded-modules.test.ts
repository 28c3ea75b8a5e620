/**
 * @trawl/base is what every process loads, Kafka or not: loading it must load no Kafka client. The
 * streams runtime is the control that shows the check sees one when it is there.
 */
import { describe, expect, it } from 'vitest';
import { kafkaPackagesIn, modulesLoadedBy } from '../src/testing/index.ts';

describe('what loading a package loads', () => {
  it('@trawl/base loads no Kafka client', async () => {
    const loaded = await modulesLoadedBy(['@trawl/base']);
    expect(loaded.packages).toContain('@trawl/base');
    expect(loaded.packages).toContain('pino');
    expect(kafkaPackagesIn(loaded)).toEqual([]);
  });

  it('sees the Kafka client the streams runtime loads, ESM and CommonJS modules alike', async () => {
    const loaded = await modulesLoadedBy(['@trawl/streams']);
    expect(kafkaPackagesIn(loaded)).toEqual(['@kafkajs/confluent-schema-registry', '@trawl/streams', 'kafkajs']);
    // kafkajs is CommonJS, required from the streams runtime's own TypeScript (ESM).
    expect(loaded.files.some((f) => f.includes('/node_modules/kafkajs/src/'))).toBe(true);
    expect(loaded.files.some((f) => f.endsWith('/streams/src/kafka/kafkajs.ts'))).toBe(true);
  });

  it('refuses a module that does not load, with its error', async () => {
    await expect(modulesLoadedBy(['@trawl/no-such-package'])).rejects.toThrow(/no-such-package/);
  });
});
