import { describe, expect, it } from 'vitest';
import { Gauge, Registry } from 'prom-client';
import { startOperatorServer } from '@trawl/streams';
import { lagOf, serviceHealth } from './service-health.ts';

describe('a service health as trawl status reads it', () => {
  it('ok with its lag while the operator port answers, unready with the failing check, down once it is gone', async () => {
    const registry = new Registry();
    const lag = new Gauge({ name: 'trawl_consumer_lag', help: 'lag', labelNames: ['consumer', 'topic', 'partition'], registers: [registry] });
    lag.set({ consumer: 'frontier', topic: 't', partition: '0' }, 3);
    lag.set({ consumer: 'frontier', topic: 't', partition: '1' }, 4);
    let dbUp = true;
    const server = await startOperatorServer({
      host: '127.0.0.1',
      port: 0,
      registries: () => [registry],
      phase: () => 'running',
      checks: () => ({ postgres: async () => { if (!dbUp) throw new Error('ECONNREFUSED'); } }),
      // Every probe runs a round: the test flips the check between two probes.
      readyCacheMs: 0,
    });
    const port = new URL(server.url).port;
    const spec = { name: 'frontier', app: 'frontier', env: { TRAWL_FRONTIER_METRICS_PORT: port } };
    expect(await serviceHealth(spec)).toEqual({ health: 'ok', unready: {}, lag: 7, metrics_url: `http://127.0.0.1:${port}/metrics` });
    dbUp = false;
    expect(await serviceHealth(spec)).toMatchObject({ health: 'unready', unready: { postgres: 'ECONNREFUSED' } });
    await server.close();
    expect(await serviceHealth(spec)).toMatchObject({ health: 'down', lag: null });
  });

  it('sums consumer and projection lag, none without the series', () => {
    expect(lagOf('trawl_consumer_lag{consumer="w",topic="t",partition="0"} 2\ntrawl_projection_lag{projection="p",topic="t",partition="0"} 5\n')).toBe(7);
    expect(lagOf('trawl_api_crawl_requests_total 1\n')).toBeNull();
  });
});
