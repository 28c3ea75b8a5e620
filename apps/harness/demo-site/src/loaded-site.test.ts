import { afterAll, beforeAll, expect, it } from 'vitest';
import { createLoadedSite, type LoadedSite } from './loaded-site.ts';

let site: LoadedSite;
beforeAll(async () => {
  site = await createLoadedSite({ pages: 10, baseMs: 20, perInFlightMs: 20, cap: 2 });
});
afterAll(async () => {
  await site.close();
});

it('answers later the more is in flight, and 503 past its cap', async () => {
  const timed = async (path: string) => {
    const t0 = performance.now();
    const res = await fetch(`${site.origin}${path}`);
    await res.text();
    return { status: res.status, ms: performance.now() - t0 };
  };
  const alone = await timed('/p/1');
  expect(alone.status).toBe(200);
  site.resetStats();
  const three = await Promise.all([timed('/p/1'), timed('/p/2'), timed('/p/3')]);
  expect(three.map((r) => r.status).sort()).toEqual([200, 200, 503]);
  // The second one in flight waits base + 2 × per-in-flight (a lower bound: a loaded machine only adds).
  expect(Math.max(...three.filter((r) => r.status === 200).map((r) => r.ms))).toBeGreaterThanOrEqual(59);
  expect(site.stats()).toEqual({ ok: 2, errors: 1, maxInFlight: 2 });
  expect((await (await fetch(site.home)).text()).match(/href="\/p\/\d+"/g)).toHaveLength(9);
});
