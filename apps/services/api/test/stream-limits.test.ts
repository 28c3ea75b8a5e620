/**
 * Open streams per user, and what open streams cost Postgres: a user's 21st SSE log stream or
 * WebSocket feed is refused with 429 TOO_MANY_STREAMS (the limit counts both), and N log streams
 * of one job share one poller instead of polling Postgres N times a round.
 */
import trawlConsole from '@trawl/console';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { buildApp } from '../src/app.ts';
import { appendLog, seedJob } from './read-model.ts';
import { openSse, type SseStream } from './sse-client.ts';
import { connectFeed, countingPool, eventually, keyKnown, sleep, startTestApi, type TestApi } from './support.ts';

let api: TestApi;
let base: string;
beforeAll(async () => {
  api = await startTestApi({ live: true });
  await api.app.liveFeed.ready;
  base = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

function wsUrl(path: string): string {
  const { port } = api.app.server.address() as AddressInfo;
  return `ws://127.0.0.1:${port}${path}`;
}

async function refusedUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.once('error', () => undefined);
  });
}

describe('streams per user', () => {
  it('the 21st stream of a user is refused with 429 TOO_MANY_STREAMS, SSE and WebSocket counted together', async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    const job = await seedJob(api.db.pool, { user_id: alice.user, status: 'running' });
    const sse: SseStream[] = [];
    const sockets: WebSocket[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const s = await openSse(`${base}/jobs/${job}/logs`, alice.auth);
        expect(s.status).toBe(200);
        sse.push(s);
      }
      for (let i = 0; i < 8; i++) sockets.push((await connectFeed(wsUrl('/events'), alice.auth)).ws);

      const extraSse = await openSse(`${base}/jobs/${job}/logs`, alice.auth);
      expect(extraSse.status).toBe(429);
      extraSse.close();
      const extraWs = await refusedUpgrade(wsUrl('/events'), alice.auth);
      expect(extraWs.status).toBe(429);
      expect(JSON.parse(extraWs.body).error.code).toBe('TOO_MANY_STREAMS');
      const viaInject = await api.app.inject({ method: 'GET', url: `/jobs/${job}/logs`, headers: alice.auth });
      expect(viaInject.statusCode).toBe(429);
      expect(viaInject.json().error).toMatchObject({ code: 'TOO_MANY_STREAMS', message: expect.stringContaining('20') });

      // Another user is not affected.
      const bobs = (await connectFeed(wsUrl('/events'), bob.auth)).ws;
      sockets.push(bobs);

      // Closing one gives its slot back, for either kind.
      sse.pop()!.close();
      sockets[0]!.close();
      const again = await eventually(async () => {
        const s = await openSse(`${base}/jobs/${job}/logs`, alice.auth);
        if (s.status === 200) return s;
        s.close();
        return undefined;
      });
      sse.push(again);
      await eventually(async () => {
        try {
          sockets.push((await connectFeed(wsUrl('/events'), alice.auth)).ws);
          return true;
        } catch {
          return false;
        }
      });
      expect((await refusedUpgrade(wsUrl('/events'), alice.auth)).status).toBe(429);
    } finally {
      for (const s of sse) s.close();
      for (const w of sockets) w.close();
    }
  });

  it('a refused or plain GET of /events takes no slot', async () => {
    const carol = await api.user('carol');
    for (let i = 0; i < 30; i++) {
      expect((await api.app.inject({ method: 'GET', url: '/events', headers: carol.auth })).statusCode).toBe(426);
    }
    const sockets: WebSocket[] = [];
    try {
      for (let i = 0; i < 20; i++) sockets.push((await connectFeed(wsUrl('/events'), carol.auth)).ws);
    } finally {
      for (const w of sockets) w.close();
    }
  });
});

describe('log streams share one poller per job', () => {
  it('20 streams of one running job cost Postgres about one query per round, not two per stream', async () => {
    const pollMs = 50;
    const { pool, count } = countingPool(api.db.pool, (sql) => /FROM (jobs|job_log)\b/.test(sql));
    const app: FastifyInstance = await buildApp({ pool, producer: api.producer, config: { ssePollMs: pollMs }, mount: (app) => app.register(trawlConsole) });
    const appBase = await app.listen({ host: '127.0.0.1', port: 0 });
    const streams: SseStream[] = [];
    try {
      const { user, key, auth } = await api.user('many');
      await keyKnown(app, key);
      const job = await seedJob(api.db.pool, { user_id: user, status: 'running' });
      await appendLog(api.db.pool, job, [{ msg: 'one' }]);
      for (let i = 0; i < 20; i++) {
        const s = await openSse(`${appBase}/jobs/${job}/logs`, auth);
        expect(s.status).toBe(200);
        streams.push(s);
        expect((await s.next())?.id).toBe('1');
      }
      const before = count();
      const windowMs = 2_000;
      await sleep(windowMs);
      const idle = count() - before;
      const rounds = windowMs / pollMs;
      process.stdout.write(`SSE-POLL ${JSON.stringify({ streams: 20, poll_ms: pollMs, window_ms: windowMs, queries: idle, per_stream_polling_would_be: 2 * 20 * rounds })}\n`);
      expect(idle).toBeLessThanOrEqual(rounds * 1.5);

      // Every stream still gets every new line, and the end.
      await appendLog(api.db.pool, job, [{ msg: 'two' }, { msg: 'three' }], 'finished');
      for (const s of streams) expect((await s.rest()).map((m) => m.id ?? m.event)).toEqual(['2', '3', 'end']);
      expect(app.jobLogs.pollerCount).toBe(0);
    } finally {
      for (const s of streams) s.close();
      await app.close();
    }
  });
});
