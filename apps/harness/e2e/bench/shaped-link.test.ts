import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startShapedLink, type ShapedLink } from './shaped-link.ts';

const BODY = Buffer.alloc(250_000, 'x');
let site: Server;
let link: ShapedLink;

beforeAll(async () => {
  site = createServer((_req, res) => res.end(BODY));
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  // 8 Mbit/s: one byte a microsecond; 20 ms each way.
  link = await startShapedLink({ host: '127.0.0.1', port: (site.address() as AddressInfo).port }, { mbit: 8, delayMs: 20 });
});
afterAll(async () => {
  await link?.close();
  await new Promise<void>((r) => site?.close(() => r()));
});

describe('the shaped link of the recrawl bench', () => {
  it('delivers the whole answer no sooner than its bandwidth and delays allow, sharing one uplink', async () => {
    const started = performance.now();
    const bodies = await Promise.all([0, 1].map(async () => Buffer.from(await (await fetch(`${link.origin}/`)).arrayBuffer())));
    const ms = performance.now() - started;
    expect(bodies.every((b) => b.equals(BODY))).toBe(true);
    // Two answers of 250 KB over one 8 Mbit/s uplink: 500 ms on the wire, plus a round trip (40 ms).
    expect(ms).toBeGreaterThan(500 + 40);
    expect(ms).toBeLessThan(5_000);
  });
});
