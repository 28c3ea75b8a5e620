import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, type HardSite } from './index.ts';
import { expectedProxyOnly } from './proxy-only.ts';

let site: HardSite;
beforeAll(async () => {
  site = await createHardSite();
});
afterAll(async () => {
  await site?.close();
});

function get(path: string, options: { headers?: Record<string, string>; localAddress?: string } = {}): Promise<{ status: number; body: string }> {
  const u = new URL(path, site.origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, headers: options.headers, localAddress: options.localAddress }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hard site: pages only a proxy gets', () => {
  it('refuses a direct request', async () => {
    expect((await get(expectedProxyOnly.entry)).status).toBe(expectedProxyOnly.refusedStatus);
  });

  it('answers a request with a Via header, or from another address than 127.0.0.1', async () => {
    const list = await get(expectedProxyOnly.entry, { headers: { via: '1.1 some-proxy' } });
    expect(list.status).toBe(200);
    for (const page of expectedProxyOnly.pages.slice(1)) expect(list.body).toContain(`href="${page}"`);
    const item = await get('/proxy/item/2', { localAddress: '127.0.0.2' });
    expect(item).toMatchObject({ status: 200 });
    expect(item.body).toContain(expectedProxyOnly.titles[1]);
    expect((await get('/proxy/item/9', { headers: { via: 'x' } })).status).toBe(404);
  });
});
