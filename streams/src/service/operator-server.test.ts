import { afterEach, describe, expect, it } from 'vitest';
import { Registry, Counter } from 'prom-client';
import { operatorPortFromEnv, operatorPortVariable, startOperatorServer, type OperatorServer, type ServicePhase } from './operator-server.ts';

let server: OperatorServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('the operator port', () => {
  it('serves /metrics from every registry, /healthz while alive, /readyz from the phase and the checks (redacted), with the facts decided at start', async () => {
    const a = new Registry();
    const b = new Registry();
    new Counter({ name: 'a_total', help: 'a', registers: [a] }).inc(3);
    new Counter({ name: 'b_total', help: 'b', registers: [b] }).inc(4);
    let phase: ServicePhase = 'starting';
    let dbUp = false;
    server = await startOperatorServer({
      host: '127.0.0.1',
      port: 0,
      registries: () => [a, b],
      phase: () => phase,
      checks: () => ({
        postgres: async () => {
          if (!dbUp) throw new Error('connect ECONNREFUSED postgres://trawl:s3cret@db:5432/trawl');
        },
      }),
      facts: () => ({ browserSandbox: { state: 'on', user: 'trawl-chromium' } }),
      // Every answer below follows a change of state: none from an earlier round.
      readyCacheMs: 0,
    });
    const metrics = await fetch(`${server.url}/metrics`);
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    const text = await metrics.text();
    expect(text).toContain('a_total 3');
    expect(text).toContain('b_total 4');

    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const starting = await fetch(`${server.url}/readyz`);
    expect(starting.status).toBe(503);
    expect(await starting.json()).toMatchObject({ status: 'unready', phase: 'starting' });

    phase = 'running';
    const down = await fetch(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    const body = await down.text();
    expect(body).toContain('ECONNREFUSED');
    expect(body).not.toContain('s3cret');

    dbUp = true;
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { postgres: { ok: true } }, facts: { browserSandbox: { state: 'on', user: 'trawl-chromium' } } });

    phase = 'stopping';
    expect((await fetch(`${server.url}/readyz`)).status).toBe(503);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });

  it('/readyz answers a burst of probes from one round of checks, and from the cache for readyCacheMs', async () => {
    let rounds = 0;
    server = await startOperatorServer({
      host: '127.0.0.1',
      port: 0,
      registries: () => [],
      phase: () => 'running',
      checks: () => ({
        postgres: async () => {
          rounds++;
          await new Promise((r) => setTimeout(r, 50));
        },
      }),
      readyCacheMs: 60_000,
    });
    const answers = await Promise.all(Array.from({ length: 100 }, () => fetch(`${server!.url}/readyz`)));
    expect(answers.map((a) => a.status)).toEqual(new Array(100).fill(200));
    expect(rounds).toBe(1);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    expect(rounds).toBe(1);
  });

  it('fails /healthz while the event loop is held up', async () => {
    server = await startOperatorServer({ host: '127.0.0.1', port: 0, registries: () => [], phase: () => 'running', checks: () => ({}), maxLoopDelayMs: 200 });
    const url = `${server.url}/healthz`;
    // Held up past the limit: the answer comes after the block, and says so.
    const answer = fetch(url);
    const until = Date.now() + 1_500;
    while (Date.now() < until) {
      // block the loop
    }
    const res = await answer;
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'loop-blocked' });
  });

  it('takes its port from TRAWL_<SERVICE>_METRICS_PORT, distinct defaults, 0 for none', () => {
    expect(operatorPortVariable('projector-pg')).toBe('TRAWL_PROJECTOR_PG_METRICS_PORT');
    expect(operatorPortFromEnv('frontier', {})).toBe(9464);
    expect(operatorPortFromEnv('worker', { TRAWL_WORKER_INSTANCE: '2' })).toBe(9471);
    expect(operatorPortFromEnv('api', { TRAWL_METRICS_PORT: '9999' })).toBe(9999);
    expect(operatorPortFromEnv('dispatcher', { TRAWL_DISPATCHER_METRICS_PORT: '0' })).toBeUndefined();
    expect(() => operatorPortFromEnv('dispatcher', { TRAWL_DISPATCHER_METRICS_PORT: 'x' })).toThrow(/TRAWL_DISPATCHER_METRICS_PORT/);
  });
});
