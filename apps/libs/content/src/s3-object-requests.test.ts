/**
 * The signed requests against a store that hangs (a TCP server that takes the request and never
 * answers) and against the real S3 of the environment (the local stack's S3Proxy by default),
 * whose signature check is what proves the signing.
 */
import { createServer, type Socket } from 'node:net';
import { afterEach, expect, it } from 'vitest';
import { contentStoreConfig } from './content-config.ts';
import { ContentStoreUnavailableError } from './errors.ts';
import { S3ObjectRequests } from './s3-object-requests.ts';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

it('fails each attempt of a store that stays silent, and gives up after three', async () => {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((s) => {
    accepted++;
    sockets.add(s);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const config = { endpoint: `http://127.0.0.1:${(server.address() as { port: number }).port}`, bucket: 'silent', region: 'us-east-1' };
  const requests = new S3ObjectRequests(config, async () => ({ accessKeyId: 'key', secretAccessKey: 'secret' }), { idleTimeoutMs: 200 });
  closers.push(() => requests.close());
  const started = Date.now();
  const err = await requests.send({ method: 'HEAD', key: 'sha256/ab/x' }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ContentStoreUnavailableError);
  expect((err as Error).cause).toMatchObject({ message: 'no byte from the store in 200 ms' });
  expect(accepted).toBe(3);
  expect(Date.now() - started).toBeGreaterThanOrEqual(3 * 200);
});

it('asks for the credentials at each request, so that rotated ones are used, and tells a missing object from a refused one', async () => {
  const config = contentStoreConfig();
  const handed = [{ accessKeyId: config.accessKeyId!, secretAccessKey: config.secretAccessKey! }, { accessKeyId: config.accessKeyId!, secretAccessKey: 'rotated-away' }];
  let asked = 0;
  const requests = new S3ObjectRequests(config, async () => handed[Math.min(asked++, handed.length - 1)]!);
  closers.push(() => requests.close());
  const key = `sha256/00/${'0'.repeat(64)}`;
  expect((await requests.send({ method: 'GET', key })).status).toBe(404);
  // The store checks the signature: one made with another secret is refused.
  expect((await requests.send({ method: 'GET', key })).status).toBe(403);
  expect(asked).toBe(2);
});
