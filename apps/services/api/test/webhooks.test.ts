/**
 * The webhook routes: CRUD scoped to the key's owner, the secret never returned, URLs checked
 * against the crawls' egress rules (a private address refused with 400), deliveries keyset-paged,
 * re-delivery and test deliveries recorded for apps/services/webhooks to send (tested there, with a
 * receiver).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
const allowed = '127.0.0.1:18999';

beforeAll(async () => {
  process.env.TRAWL_FETCH_ALLOW = allowed;
  api = await startTestApi();
});
afterAll(async () => {
  delete process.env.TRAWL_FETCH_ALLOW;
  await api?.close();
});

const secret = 'a-secret-of-24-characters';

describe('webhooks API', () => {
  it('creates, reads, lists, changes and deletes a webhook of its owner only; the secret is never returned', async () => {
    const { auth } = await api.user('hooks');
    const other = await api.user('other');
    const create = await api.app.inject({
      method: 'POST', url: '/webhooks', headers: auth,
      payload: { url: `http://${allowed}/hook`, events: ['job.completed', 'job.failed', 'job.completed'], secret, job_id: 'j-1' },
    });
    expect(create.statusCode).toBe(201);
    const hook = create.json();
    expect(hook).toMatchObject({ url: `http://${allowed}/hook`, events: ['job.completed', 'job.failed'], job_id: 'j-1', schedule_id: null, active: true });
    expect(create.body).not.toContain(secret);
    expect(hook).not.toHaveProperty('secret');

    const got = await api.app.inject({ url: `/webhooks/${hook.id}`, headers: auth });
    expect(got.json()).toEqual(hook);
    expect(got.body).not.toContain(secret);
    expect((await api.app.inject({ url: '/webhooks', headers: auth })).json().webhooks.map((w: { id: string }) => w.id)).toEqual([hook.id]);
    expect((await api.app.inject({ url: '/webhooks', headers: other.auth })).json().webhooks).toEqual([]);
    expect((await api.app.inject({ url: `/webhooks/${hook.id}`, headers: other.auth })).json().error.code).toBe('WEBHOOK_NOT_FOUND');

    const patched = await api.app.inject({ method: 'PATCH', url: `/webhooks/${hook.id}`, headers: auth, payload: { events: ['items.extracted', 'page.changed'], secret: 'another-secret-0123456789', active: false } });
    expect(patched.statusCode).toBe(200);
    expect(patched.json()).toMatchObject({ events: ['items.extracted', 'page.changed'], active: false });
    expect(patched.body).not.toContain('another-secret');
    expect((await api.db.pool.query('SELECT secret FROM webhooks WHERE id = $1', [hook.id])).rows[0].secret).toBe('another-secret-0123456789');
    expect((await api.app.inject({ method: 'PATCH', url: `/webhooks/${hook.id}`, headers: other.auth, payload: { active: true } })).statusCode).toBe(404);

    expect((await api.app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}`, headers: other.auth })).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}`, headers: auth })).statusCode).toBe(204);
    expect((await api.app.inject({ url: `/webhooks/${hook.id}`, headers: auth })).statusCode).toBe(404);
    expect((await api.app.inject({ url: '/webhooks', headers: auth })).json().webhooks).toEqual([]);
  });

  it('refuses a URL crawls may not reach (400 WEBHOOK_URL_REFUSED), at creation and on change; bad bodies are 400 VALIDATION_FAILED', async () => {
    const { auth } = await api.user('hooks');
    for (const url of ['http://10.0.0.8/hook', 'http://127.0.0.1:8081/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest', `http://user:pw@${allowed}/x`]) {
      const res = await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url, events: ['job.completed'], secret } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toMatchObject({ code: 'WEBHOOK_URL_REFUSED', field: 'url' });
    }
    const ok = (await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url: `http://${allowed}/ok`, events: ['job.started'], secret } })).json();
    const change = await api.app.inject({ method: 'PATCH', url: `/webhooks/${ok.id}`, headers: auth, payload: { url: 'http://192.168.1.1/' } });
    expect(change.json().error.code).toBe('WEBHOOK_URL_REFUSED');
    for (const payload of [
      { url: `http://${allowed}/x`, events: ['job.exploded'], secret },
      { url: `http://${allowed}/x`, events: [], secret },
      { url: `http://${allowed}/x`, events: ['job.started'], secret: 'short' },
      { url: `http://${allowed}/x`, events: ['job.started'] },
      { url: 'ftp://example.com/x', events: ['job.started'], secret },
    ]) {
      const res = await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('VALIDATION_FAILED');
    }
  });

  it('pages deliveries newest first, asks for a re-delivery or a test, and 404s what is not the caller\'s', async () => {
    const { auth } = await api.user('hooks');
    const other = await api.user('other');
    const hook = (await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url: `http://${allowed}/d`, events: ['job.completed'], secret } })).json();
    for (let i = 0; i < 5; i++) {
      const id = randomUUID();
      await api.db.pool.query(
        `INSERT INTO webhook_deliveries (id, webhook_id, event_id, type, job_id, body, status, attempts, last_error, created_at)
         VALUES ($1, $2, $1, 'job.completed', 'j', '{}', 'failed', 5, 'receiver answered 500', now() - make_interval(secs => $3))`,
        [id, hook.id, 10 - i],
      );
    }
    const first = (await api.app.inject({ url: `/webhooks/${hook.id}/deliveries?limit=3`, headers: auth })).json();
    expect(first.deliveries).toHaveLength(3);
    expect(first.deliveries[0]).toMatchObject({ status: 'failed', attempts: 5, last_error: 'receiver answered 500', type: 'job.completed' });
    const second = (await api.app.inject({ url: `/webhooks/${hook.id}/deliveries?limit=3&cursor=${first.next_cursor}`, headers: auth })).json();
    expect(second.deliveries).toHaveLength(2);
    expect(second.next_cursor).toBeNull();
    const all = [...first.deliveries, ...second.deliveries];
    expect(new Set(all.map((d: { id: string }) => d.id)).size).toBe(5);
    expect(all.map((d: { created_at: string }) => d.created_at)).toEqual([...all.map((d: { created_at: string }) => d.created_at)].sort().reverse());
    expect((await api.app.inject({ url: `/webhooks/${hook.id}/deliveries`, headers: other.auth })).statusCode).toBe(404);

    const target = all[4].id;
    const again = await api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${target}/redeliver`, headers: auth });
    expect(again.statusCode).toBe(202);
    expect(again.json()).toMatchObject({ id: target, status: 'requested' });
    expect((await api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${target}/redeliver`, headers: other.auth })).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/nope/redeliver`, headers: auth })).json().error.code).toBe('DELIVERY_NOT_FOUND');

    const test = await api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/test`, headers: auth });
    expect(test.statusCode).toBe(202);
    expect(test.json()).toMatchObject({ type: 'webhook.test', status: 'requested' });
    expect((await api.app.inject({ url: `/webhooks/${hook.id}/deliveries?status=requested`, headers: auth })).json().deliveries).toHaveLength(2);
  });
});
