/**
 * Revoking a key ends what it has open, over real sockets on the real stack: a WebSocket feed is
 * closed with 4401 `key_revoked`, an SSE log stream ends with `event: end` {reason: key_revoked},
 * both as soon as the revocation's notification arrives, while another user's streams go on.
 * The key is revoked as `trawl keys revoke` does it (revokeApiKey on Postgres, no API call).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { createApiKey, revokeApiKey } from '../src/data/api-keys.ts';
import { appendLog, seedJob } from './read-model.ts';
import { openSse, type SseMessage } from './sse-client.ts';
import { connectFeed, eventually, keyKnown, sleep, startTestApi, type TestApi } from './support.ts';

/** How soon revocation must bite: it is heard by notification, in milliseconds (plus the slack below). */
const REVOKE_MS = 600;
/** What a busy two-core machine may add: the notification's delivery, and the socket's close handshake. */
const SLACK_MS = 5_000;

let api: TestApi;
let base: string;
const sockets: WebSocket[] = [];

beforeAll(async () => {
  api = await startTestApi({ live: true, config: { ssePollMs: 50 } });
  base = await api.app.listen({ host: '127.0.0.1', port: 0 });
  await api.app.liveFeed.ready;
});
afterAll(async () => {
  for (const s of sockets) s.terminate();
  await api?.close();
});

async function userWithKeyId(prefix: string) {
  const user = `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
  const { key, id } = await createApiKey(api.db.pool, user);
  await keyKnown(api.app, key);
  return { user, key, id, auth: { authorization: `Bearer ${key}` } };
}

async function feed(auth: Record<string, string>) {
  const opened = await connectFeed(`${base.replace('http', 'ws')}/events`, auth);
  sockets.push(opened.ws);
  const closed = new Promise<{ code: number; reason: string; at: number }>((resolve) => {
    opened.ws.once('close', (code, reason) => resolve({ code, reason: String(reason), at: Date.now() }));
  });
  return { ...opened, closed };
}

/** `promise`, or a rejection once `ms` have passed without it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))]);
}

/** Everything the stream sends until the server ends it, and when it ended. */
async function untilEnd(stream: Awaited<ReturnType<typeof openSse>>, timeoutMs: number): Promise<{ messages: SseMessage[]; at: number }> {
  const messages = await stream.rest(timeoutMs);
  return { messages, at: Date.now() };
}

describe('revoking a key ends its open streams', () => {
  it('closes its WebSocket feed with 4401 and ends its SSE log stream with a key_revoked end, within a second; others go on', async () => {
    const alice = await userWithKeyId('alice');
    const bob = await userWithKeyId('bob');
    const aliceJob = await seedJob(api.db.pool, { user_id: alice.user, status: 'running' });
    const bobJob = await seedJob(api.db.pool, { user_id: bob.user, status: 'running' });
    await appendLog(api.db.pool, aliceJob, [{ msg: 'before' }]);
    await appendLog(api.db.pool, bobJob, [{ msg: 'before' }]);

    const aliceFeed = await feed(alice.auth);
    const bobFeed = await feed(bob.auth);
    const aliceLogs = await openSse(`${base}/jobs/${aliceJob}/logs?access_token=${alice.key}`);
    const bobLogs = await openSse(`${base}/jobs/${bobJob}/logs`, bob.auth);
    expect([aliceLogs.status, bobLogs.status]).toEqual([200, 200]);
    expect((await aliceLogs.next())?.data).toMatchObject({ msg: 'before' });
    expect((await bobLogs.next())?.data).toMatchObject({ msg: 'before' });
    expect(api.app.limits.streams.count(alice.user)).toBe(2);

    expect(await revokeApiKey(api.db.pool, alice.id)).toBe(true);
    const revokedAt = Date.now();

    const [closed, ended] = await Promise.all([
      within(aliceFeed.closed, REVOKE_MS + SLACK_MS + 5_000, 'the feed closed'),
      untilEnd(aliceLogs, REVOKE_MS + SLACK_MS + 5_000),
    ]);
    expect(closed.code).toBe(4401);
    expect(closed.reason).toBe('key_revoked');
    expect(closed.at - revokedAt).toBeLessThan(REVOKE_MS + SLACK_MS);
    // Nothing of the job after the revocation: no status, no counters, only why it ended.
    expect(ended.messages).toEqual([{ event: 'end', data: { job_id: aliceJob, reason: 'key_revoked' } }]);
    expect(ended.at - revokedAt).toBeLessThan(REVOKE_MS + SLACK_MS);

    // REST refuses the key from the same moment (it left the key index), and the slots came back.
    expect((await api.app.inject({ method: 'GET', url: '/jobs', headers: alice.auth })).statusCode).toBe(401);
    await eventually(async () => api.app.limits.streams.count(alice.user) === 0, 5_000);

    // Bob's feed and log stream were not touched: both still deliver.
    await sleep(REVOKE_MS);
    expect(bobFeed.ws.readyState).toBe(bobFeed.ws.OPEN);
    await appendLog(api.db.pool, bobJob, [{ msg: 'after' }]);
    expect((await bobLogs.next())?.data).toMatchObject({ msg: 'after' });
    const crawl = await api.app.inject({ method: 'POST', url: '/crawl', headers: bob.auth, payload: { start_urls: ['http://b.test/after'], depth: 0 } });
    const bobJobLive = crawl.json().job_id as string;
    await eventually(async () => bobFeed.messages.some((m) => m.type === 'event' && m.job_id === bobJobLive));
    bobLogs.close();
  });

  it('a feed opened with ?access_token= is closed the same way, and a new one with the revoked key is refused', async () => {
    const carol = await userWithKeyId('carol');
    const viaQuery = await connectFeed(`${base.replace('http', 'ws')}/events?access_token=${carol.key}`, {});
    sockets.push(viaQuery.ws);
    const closed = new Promise<number>((resolve) => viaQuery.ws.once('close', (code) => resolve(code)));
    await revokeApiKey(api.db.pool, carol.id);
    expect(await within(closed, REVOKE_MS + SLACK_MS, 'the feed closed')).toBe(4401);
    await expect(connectFeed(`${base.replace('http', 'ws')}/events`, carol.auth)).rejects.toMatchObject({ status: 401 });
  });
});
