/**
 * GET /jobs/:id/logs over a real socket: history, then live lines, then `event: end`; a reconnect
 * with Last-Event-ID resumes without gaps or repeats. Log rows are written as projector-pg writes
 * them (gapless seq under the job's row lock).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLog, seedJob } from './read-model.ts';
import { openSse } from './sse-client.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
let base: string;
beforeAll(async () => {
  api = await startTestApi({ config: { ssePollMs: 50 } });
  base = await api.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await api?.close();
});

describe('GET /jobs/:id/logs (SSE)', () => {
  it('sends history, then live lines, then end; Last-Event-ID resumes exactly after the last seen line', async () => {
    const { user, auth } = await api.user();
    const job = await seedJob(api.db.pool, { user_id: user, status: 'running' });
    await appendLog(api.db.pool, job, [{ msg: 'one' }, { msg: 'two' }, { msg: 'three', level: 'warn' }]);

    const stream = await openSse(`${base}/jobs/${job}/logs`, auth);
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/text\/event-stream/);
    const history = [await stream.next(), await stream.next(), await stream.next()];
    expect(history.map((m) => [m?.id, m?.event, (m?.data as { msg: string }).msg])).toEqual([
      ['1', 'log', 'one'],
      ['2', 'log', 'two'],
      ['3', 'log', 'three'],
    ]);
    expect(history[2]?.data).toMatchObject({ seq: 3, level: 'warn', event: 'PageFetched', ts: expect.any(String), data: { n: 3 } });

    await appendLog(api.db.pool, job, [{ msg: 'four' }, { msg: 'five' }]);
    const live = [await stream.next(), await stream.next()];
    expect(live.map((m) => m?.id)).toEqual(['4', '5']);

    await appendLog(api.db.pool, job, [{ msg: 'six: done' }], 'finished');
    const tail = await stream.rest();
    expect(tail.map((m) => [m.id, m.event])).toEqual([['6', 'log'], [undefined, 'end']]);
    expect(tail[1]?.data).toMatchObject({ job_id: job, status: 'finished' });

    // A client that saw up to 4 reconnects: 5, 6, end — no gap, no repeat.
    const resumed = await (await openSse(`${base}/jobs/${job}/logs`, { ...auth, 'last-event-id': '4' })).rest();
    expect(resumed.map((m) => m.id ?? m.event)).toEqual(['5', '6', 'end']);
    // Up to date: only the end.
    const done = await (await openSse(`${base}/jobs/${job}/logs?last_event_id=6`, auth)).rest();
    expect(done.map((m) => m.event)).toEqual(['end']);
  });

  it('resumes mid-stream after a dropped connection while the job runs', async () => {
    const { user, auth } = await api.user();
    const job = await seedJob(api.db.pool, { user_id: user, status: 'running' });
    await appendLog(api.db.pool, job, [{ msg: 'a' }, { msg: 'b' }]);
    const first = await openSse(`${base}/jobs/${job}/logs`, auth);
    const seen = [await first.next(), await first.next()];
    first.close();
    await appendLog(api.db.pool, job, [{ msg: 'c' }, { msg: 'd' }]);
    const second = await openSse(`${base}/jobs/${job}/logs`, { ...auth, 'last-event-id': seen[1]!.id! });
    await appendLog(api.db.pool, job, [{ msg: 'e' }], 'cancelled');
    const rest = await second.rest();
    expect([...seen, ...rest].map((m) => m?.id ?? m?.event)).toEqual(['1', '2', '3', '4', '5', 'end']);
    expect(rest.at(-1)?.data).toMatchObject({ status: 'cancelled' });
  });

  it('takes the key as ?access_token= (EventSource) and refuses other users', async () => {
    const alice = await api.user();
    const bob = await api.user();
    const job = await seedJob(api.db.pool, { user_id: alice.user, status: 'finished' });
    const viaQuery = await openSse(`${base}/jobs/${job}/logs?access_token=${alice.key}`);
    expect(viaQuery.status).toBe(200);
    expect((await viaQuery.rest()).map((m) => m.event)).toEqual(['end']);
    const other = await openSse(`${base}/jobs/${job}/logs?access_token=${bob.key}`);
    expect(other.status).toBe(404);
    other.close();
    const none = await openSse(`${base}/jobs/${job}/logs`);
    expect(none.status).toBe(401);
    none.close();
  });

  it('waits for a job the projector has not seen yet', async () => {
    const { user, auth } = await api.user();
    const { job_id } = (await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['http://a.test/s'], depth: 0 } })).json();
    const stream = await openSse(`${base}/jobs/${job_id}/logs`, auth);
    expect(stream.status).toBe(200);
    await expect(stream.next(500)).rejects.toThrow('no SSE message in time');
    // The projector catches up: the job row and its lines appear.
    await seedJob(api.db.pool, { job_id, user_id: user, status: 'running' });
    await appendLog(api.db.pool, job_id, [{ msg: 'requested' }], 'finished');
    expect((await stream.rest()).map((m) => m.id ?? m.event)).toEqual(['1', 'end']);
  });
});
