/**
 * The webhook routes: CRUD scoped to the key's owner, the secret never returned, URLs checked
 * against the crawls' egress rules (a private address refused with 400), deliveries keyset-paged,
 * re-delivery and test deliveries recorded for apps/services/webhooks to send (tested there, with a
 * receiver).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openWebhookSecret, secretBoxFromEnv } from '@trawl/store/secrets';
import { startTestApi, type TestApi } from './support.ts';
import { setUserWebhookQuotas } from '@trawl/store';

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
    expect(openWebhookSecret(secretBoxFromEnv(), hook.id, (await api.db.pool.query('SELECT secret FROM webhooks WHERE id = $1', [hook.id])).rows[0].secret)).toBe('another-secret-0123456789');
    expect((await api.app.inject({ method: 'PATCH', url: `/webhooks/${hook.id}`, headers: other.auth, payload: { active: true } })).statusCode).toBe(404);

    expect((await api.app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}`, headers: other.auth })).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'DELETE', url: `/webhooks/${hook.id}`, headers: auth })).statusCode).toBe(204);
    expect((await api.app.inject({ url: `/webhooks/${hook.id}`, headers: auth })).statusCode).toBe(404);
    expect((await api.app.inject({ url: '/webhooks', headers: auth })).json().webhooks).toEqual([]);
  });

  it('keeps the secret sealed at rest: the row holds no trace of it, created or changed, and the key opens it', async () => {
    const { auth } = await api.user('sealed');
    const given = `whsec-${randomUUID()}`;
    const hook = (await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url: `http://${allowed}/sealed`, events: ['job.completed'], secret: given } })).json();
    const row = async (): Promise<Record<string, unknown>> => (await api.db.pool.query('SELECT * FROM webhooks WHERE id = $1', [hook.id])).rows[0];
    const created = JSON.stringify(await row());
    expect(created).not.toContain(given);
    expect(created).not.toContain(Buffer.from(given).toString('base64'));
    expect(openWebhookSecret(secretBoxFromEnv(), hook.id, (await row()).secret as string)).toBe(given);

    const changed = `whsec-${randomUUID()}`;
    expect((await api.app.inject({ method: 'PATCH', url: `/webhooks/${hook.id}`, headers: auth, payload: { secret: changed } })).statusCode).toBe(200);
    const after = JSON.stringify(await row());
    expect(after).not.toContain(changed);
    expect(after).not.toContain(given);
    expect(openWebhookSecret(secretBoxFromEnv(), hook.id, (await row()).secret as string)).toBe(changed);
  });

  it('refuses a URL crawls may not reach (400 WEBHOOK_URL_REFUSED), at creation and on change; bad bodies are 400 VALIDATION_FAILED', async () => {
    const { auth } = await api.user('hooks');
    for (const url of ['http://10.0.0.8/hook', 'http://127.0.0.1:8081/hook', 'http://[::1]/hook', 'http://169.254.169.254/latest', `http://user:pw@${allowed}/x`]) {
      const res = await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url, events: ['job.completed'], secret } });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error, url).toMatchObject({ code: 'WEBHOOK_URL_REFUSED', field: 'url' });
    }
    // A name that resolves to an address crawls may not reach: the answer says so with the code, never
    // the address it resolved to nor the range that refused it (the request's log keeps those).
    const named = await api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url: 'http://localhost:8081/hook', events: ['job.completed'], secret } });
    expect(named.json().error).toMatchObject({ code: 'WEBHOOK_URL_REFUSED', field: 'url', message: 'webhook URL refused: the address is not allowed (TRAWL_UNSAFE_ADDRESS)' });
    expect(named.body).not.toMatch(/127\.0\.0\.|::1|\/8|\/128|TRAWL_FETCH_ALLOW/);
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

// Webhook limits (issue 32, item 5): each user's subscriptions, and test and re-delivery calls an hour.
describe('webhook limits', () => {
  const subscribe = (auth: Record<string, string>, n: number) =>
    api.app.inject({ method: 'POST', url: '/webhooks', headers: auth, payload: { url: `http://${allowed}/limit-${n}`, events: ['job.completed'], secret } });

  it('a subscription past `webhooks` is refused with 429 QUOTA_EXCEEDED naming it; deleting one makes room, deactivating does not', async () => {
    const { user, auth } = await api.user('many-hooks');
    const other = await api.user('few-hooks');
    await setUserWebhookQuotas(api.db.pool, user, { webhooks: 2 });
    const first = (await subscribe(auth, 1)).json();
    expect((await subscribe(auth, 2)).statusCode).toBe(201);
    const third = await subscribe(auth, 3);
    expect(third.statusCode).toBe(429);
    expect(third.json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', message: expect.stringContaining('quota webhooks (2)'), limit: { name: 'webhooks', value: 2, used: 2 } });
    expect((await api.app.inject({ url: '/webhooks', headers: auth })).json().webhooks).toHaveLength(2);
    // Another user's subscriptions are theirs (the default, 20).
    expect((await subscribe(other.auth, 1)).statusCode).toBe(201);
    // Deactivated, a webhook still counts (PATCH active:true takes no room); deleted, it does not.
    await api.app.inject({ method: 'PATCH', url: `/webhooks/${first.id}`, headers: auth, payload: { active: false } });
    expect((await subscribe(auth, 4)).statusCode).toBe(429);
    expect((await api.app.inject({ method: 'DELETE', url: `/webhooks/${first.id}`, headers: auth })).statusCode).toBe(204);
    expect((await subscribe(auth, 5)).statusCode).toBe(201);
    // Concurrent requests cannot pass it together: ten at once with no room left make nothing.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, i) => subscribe(auth, 10 + i)));
    expect(burst.map((r) => r.statusCode)).toEqual(Array(10).fill(429));
  });

  it('test and re-delivery calls past `webhook_tests_per_hour` are refused with 429 QUOTA_EXCEEDED and retry-after; a call for no delivery counts nothing', async () => {
    const { user, auth } = await api.user('tester');
    const other = await api.user('other-tester');
    await setUserWebhookQuotas(api.db.pool, user, { webhook_tests_per_hour: 3 });
    const hook = (await subscribe(auth, 1)).json();
    const test = () => api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/test`, headers: auth });
    const redeliver = (id: string) => api.app.inject({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${id}/redeliver`, headers: auth });

    const sent = await test();
    expect(sent.statusCode).toBe(202);
    expect((await redeliver('nope')).json().error.code).toBe('DELIVERY_NOT_FOUND');
    expect((await redeliver(sent.json().id)).statusCode).toBe(202);
    expect((await test()).statusCode).toBe(202);
    const refused = await test();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: { name: 'webhook_tests_per_hour', value: 3, used: 3 } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(3500);
    const again = await redeliver(sent.json().id);
    expect(again.statusCode).toBe(429);
    expect(again.json().error.limit).toMatchObject({ name: 'webhook_tests_per_hour' });
    // The refused calls asked for nothing: two tests and one re-delivery are all the deliveries made.
    expect((await api.app.inject({ url: `/webhooks/${hook.id}/deliveries`, headers: auth })).json().deliveries).toHaveLength(2);
    // Another user's calls are their own.
    const theirs = (await subscribe(other.auth, 1)).json();
    expect((await api.app.inject({ method: 'POST', url: `/webhooks/${theirs.id}/test`, headers: other.auth })).statusCode).toBe(202);
    // An hour later there is room again.
    await api.db.pool.query("UPDATE webhook_usage SET minute = minute - interval '61 minutes' WHERE user_id = $1", [user]);
    expect((await test()).statusCode).toBe(202);
  });
});
