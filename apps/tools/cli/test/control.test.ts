/**
 * `trawl schedules`, `trawl webhooks` and `trawl keys list|revoke` as a user runs them (`node
 * bin/trawl.js …`), against a real API on a real socket, the real Postgres and Kafka. Webhook URLs
 * point at a local receiver whose port alone TRAWL_FETCH_ALLOW opens, as in production.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { buildApp, API_MIGRATIONS, API_MIGRATION_OWNER } from '@trawl/api';
import { EventProducer, provisionTopics } from '@trawl/streams';
import { testKafka, testLogger } from '@trawl/streams/testing';
import { CONFIG_MIGRATIONS, migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { openWebhookSecret, secretBoxFromEnv } from '@trawl/store/secrets';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '@trawl/projector-pg';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'trawl.js');
// eslint-disable-next-line no-control-regex -- what must not reach the terminal
const CONTROLS = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/;

let db: TestDatabase;
let app: FastifyInstance;
let producer: EventProducer;
let receiver: Server;
let allowed: string;
let env: NodeJS.ProcessEnv;
const allowBefore = process.env.TRAWL_FETCH_ALLOW;

beforeAll(async () => {
  receiver = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  allowed = `127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  // The API reads its egress exceptions when it is built.
  process.env.TRAWL_FETCH_ALLOW = allowed;
  db = await createTestDatabase('trawl_cli_control_test');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  await setupReadModels(db.pool);
  const logger = testLogger('cli-control-test');
  const kafka = testKafka('cli-control-test', logger);
  await provisionTopics(kafka);
  producer = new EventProducer({ kafka, logger });
  await producer.connect();
  // A key created or revoked by `trawl keys` reaches the API by notification, milliseconds after
  // the command's commit: well before the next command's process has started.
  app = await buildApp({ pool: db.pool, producer });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  env = { ...process.env, DATABASE_URL: db.url, TRAWL_API_URL: url, NO_COLOR: '1', TRAWL_HOME: join(import.meta.dirname, '..', '.test-home') };
});
afterAll(async () => {
  if (allowBefore === undefined) delete process.env.TRAWL_FETCH_ALLOW;
  else process.env.TRAWL_FETCH_ALLOW = allowBefore;
  await app?.close();
  await producer?.disconnect();
  await db?.drop();
  receiver?.close();
});

function trawl(args: string[], extra: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

async function newKey(user: string): Promise<{ id: string; key: string }> {
  const r = await trawl(['keys', 'create', user, '--json']);
  expect(r.code, r.stderr).toBe(0);
  const created = JSON.parse(r.stdout) as { id: string; key: string; user_id: string };
  expect(created.user_id).toBe(user);
  return created;
}

// Every step is a CLI process starting tsx: seconds each, tens of seconds on a loaded machine.
describe('trawl schedules, webhooks and keys', { timeout: 480_000 }, () => {
  it('schedules create, list, pause, resume and cancel round trip', async () => {
    const { key } = await newKey(`sched-${randomUUID().slice(0, 6)}`);
    const as = { TRAWL_API_KEY: key };
    expect((await trawl(['schedules', 'list'], as)).stdout).toContain('no schedules yet');
    expect((await trawl(['schedules', 'create', 'http://a.test/'], as)).code).toBe(2);

    const created = await trawl(['schedules', 'create', 'http://a.test/start', '--interval', '1h', '--depth', '0'], as);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(created.stderr).toMatch(/next run \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);

    const list = await trawl(['schedules', 'list'], as);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+active\\s+every 3600 s`));
    expect(list.stdout).toContain('http://a.test/start');

    const paused = await trawl(['schedules', 'pause', id, '--json'], as);
    expect(paused.code, paused.stderr).toBe(0);
    expect(JSON.parse(paused.stdout)).toMatchObject({ schedule_id: id, status: 'paused', next_run: null });
    const again = await trawl(['schedules', 'pause', id], as);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('SCHEDULE_NOT_ACTIVE');
    expect(JSON.parse((await trawl(['schedules', 'list', '--json'], as)).stdout)).toMatchObject([{ schedule_id: id, status: 'paused' }]);

    const resumed = await trawl(['schedules', 'resume', id], as);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(new RegExp(`^${id}: active, next run `));
    const { rows } = await db.pool.query('SELECT status FROM schedules WHERE id = $1', [id]);
    expect(rows[0].status).toBe('active');

    // edit: a daily 09:00 in Berlin moves the next run to that local time (07:00 or 08:00 UTC).
    const edited = await trawl(['schedules', 'edit', id, '--interval', '0 9 * * *', '--time-zone', 'Europe/Berlin', '--overlap', 'queue', '--json'], as);
    expect(edited.code, edited.stderr).toBe(0);
    const view = JSON.parse(edited.stdout) as { time_zone: string; overlap: string; next_run: string };
    expect(view).toMatchObject({ time_zone: 'Europe/Berlin', overlap: 'queue' });
    expect(new Date(view.next_run).getUTCHours()).toBeOneOf([7, 8]);
    const refused = await trawl(['schedules', 'edit', id, '--time-zone', 'Mars/Olympus'], as);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('INVALID_TIME_ZONE');

    expect((await trawl(['schedules', 'cancel', id], as)).stdout).toBe(`${id}: cancelled\n`);
    const other = await trawl(['schedules', 'resume', id], { TRAWL_API_KEY: (await newKey(`other-${randomUUID().slice(0, 6)}`)).key });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('SCHEDULE_NOT_FOUND');
  });

  it('webhooks create, list, test, deliveries and delete; refused URLs and hostile text', async () => {
    const { key } = await newKey(`hooks-${randomUUID().slice(0, 6)}`);
    const as = { TRAWL_API_KEY: key };
    const url = `http://${allowed}/hook`;
    expect((await trawl(['webhooks', 'create', url], as)).code).toBe(2);

    const created = await trawl(['webhooks', 'create', url, '--events', 'job.completed,job.failed'], as);
    expect(created.code, created.stderr).toBe(0);
    const id = created.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    // The secret was made by the CLI and shown once; it is the one the API stored (sealed).
    const secret = /shown once[^:]*: (\S+)/.exec(created.stderr)?.[1];
    expect(secret).toBeDefined();
    const stored = (await db.pool.query('SELECT secret FROM webhooks WHERE id = $1', [id])).rows[0].secret;
    expect(stored).not.toContain(secret);
    expect(openWebhookSecret(secretBoxFromEnv(), id, stored)).toBe(secret);

    const list = await trawl(['webhooks', 'list'], as);
    expect(list.stdout).toMatch(new RegExp(`${id}\\s+yes\\s+job.completed,job.failed\\s+${url.replace(/[.]/g, '\\.')}`));

    const test = await trawl(['webhooks', 'test', id, '--json'], as);
    expect(test.code, test.stderr).toBe(0);
    const delivery = JSON.parse(test.stdout) as { id: string; type: string; status: string };
    expect(delivery).toMatchObject({ type: 'webhook.test', status: 'requested' });
    const deliveries = await trawl(['webhooks', 'deliveries', id], as);
    expect(deliveries.stdout).toMatch(new RegExp(`${delivery.id}\\s+webhook\\.test\\s+requested\\s+0`));

    // redeliver: a delivery that failed for good is requested again (apps/services/webhooks sends it once more).
    await db.pool.query(`UPDATE webhook_deliveries SET status = 'failed', attempts = 6, next_attempt_at = NULL WHERE id = $1`, [delivery.id]);
    expect((await trawl(['webhooks', 'deliveries', id, '--status', 'failed'], as)).stdout).toContain(delivery.id);
    const again = await trawl(['webhooks', 'redeliver', id, delivery.id], as);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toBe(`${delivery.id}: webhook.test requested — sent once more, see: npx trawl webhooks deliveries ${id}\n`);
    const row = (await db.pool.query('SELECT status, next_attempt_at FROM webhook_deliveries WHERE id = $1', [delivery.id])).rows[0];
    expect(row.status).toBe('requested');
    expect(row.next_attempt_at).not.toBeNull();
    expect(JSON.parse((await trawl(['webhooks', 'redeliver', id, delivery.id, '--json'], as)).stdout)).toMatchObject({ id: delivery.id, status: 'requested', attempts: 6 });
    const unknown = await trawl(['webhooks', 'redeliver', id, randomUUID()], as);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('DELIVERY_NOT_FOUND');
    expect((await trawl(['webhooks', 'redeliver', id], as)).code).toBe(2);

    // A port TRAWL_FETCH_ALLOW does not open is refused, as a crawl of it would be.
    const refused = await trawl(['webhooks', 'create', 'http://127.0.0.1:1/hook', '--events', 'job.completed', '--secret', 'a-secret-of-24-characters'], as);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('WEBHOOK_URL_REFUSED');

    // A filter is free text the API keeps as given: printed without its control characters.
    const hostile = '\x1b]0;pwned\x07\x1b[2J\u202Egnp.exe';
    const filtered = await trawl(['webhooks', 'create', url, '--events', 'job.started', '--job', hostile, '--secret', 'a-secret-of-24-characters', '--json'], as);
    expect(filtered.code, filtered.stderr).toBe(0);
    expect(JSON.parse(filtered.stdout)).not.toHaveProperty('secret');
    const shown = await trawl(['webhooks', 'list'], as);
    expect(shown.stdout).toContain('job ]0;pwned[2Jgnp.exe');
    expect(shown.stdout).not.toMatch(CONTROLS);

    expect((await trawl(['webhooks', 'delete', id], as)).stdout).toBe(`${id}: deleted\n`);
    const gone = await trawl(['webhooks', 'delete', id], as);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('WEBHOOK_NOT_FOUND');
    const left = JSON.parse((await trawl(['webhooks', 'list', '--json'], as)).stdout) as { id: string }[];
    expect(left.map((w) => w.id)).not.toContain(id);
    expect(left).toHaveLength(1);
  });

  it('--json on crawl --detach and logs: JSON documents on stdout, nothing else', async () => {
    const user = `json-${randomUUID().slice(0, 6)}`;
    const { key } = await newKey(user);
    const as = { TRAWL_API_KEY: key };
    const crawl = await trawl(['crawl', `http://${allowed}/page`, '--depth', '0', '--detach', '--json'], as);
    expect(crawl.code, crawl.stderr).toBe(0);
    const answer = JSON.parse(crawl.stdout) as { job_id: string; scheduled: boolean; status_url: string };
    expect(answer).toMatchObject({ scheduled: false, cached: false });
    expect(answer.status_url).toContain(answer.job_id);

    const jobId = randomUUID();
    await db.pool.query(`INSERT INTO jobs (job_id, user_id, status, requested_at, log_seq, pages_fetched, updated_at) VALUES ($1, $2, 'finished', now(), 1, 3, now())`, [jobId, user]);
    await db.pool.query(`INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id) VALUES ($1, 1, now(), 'info', 'crawl requested', 'CrawlRequested', $2)`, [jobId, randomUUID()]);
    const logs = await trawl(['logs', jobId, '--json'], as);
    expect(logs.code, logs.stderr).toBe(0);
    const lines = logs.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toMatchObject([{ seq: 1, level: 'info', msg: 'crawl requested' }, { end: { status: 'finished', pages_fetched: 3 } }]);
  });

  it('keys revoke ends a `trawl logs` following a running job with that key: it says why and exits 1', async () => {
    const user = `revoked-${randomUUID().slice(0, 6)}`;
    const { id, key } = await newKey(user);
    const jobId = randomUUID();
    await db.pool.query(`INSERT INTO jobs (job_id, user_id, status, requested_at, log_seq, pages_fetched, updated_at) VALUES ($1, $2, 'running', now(), 1, 0, now())`, [jobId, user]);
    await db.pool.query(`INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id) VALUES ($1, 1, now(), 'info', 'crawl requested', 'CrawlRequested', $2)`, [jobId, randomUUID()]);
    const following = trawl(['logs', jobId], { TRAWL_API_KEY: key });
    // The stream is open once the API holds its slot.
    for (const until = Date.now() + 60_000; app.limits.streams.count(user) === 0; ) {
      if (Date.now() > until) throw new Error('trawl logs never opened its stream');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await trawl(['keys', 'revoke', id])).code).toBe(0);
    const ended = await following;
    expect(ended.code, ended.stderr).toBe(1);
    expect(ended.stdout).toContain('crawl requested');
    expect(ended.stderr).toContain('the API key was revoked');
    expect(ended.stdout).not.toContain('undefined');
  });

  it('keys list: ids, users, labels and states, never a key', async () => {
    const user = `listed-${randomUUID().slice(0, 6)}`;
    const first = await newKey(user);
    const labelled = await trawl(['keys', 'create', user, '--label', 'ci \x1b[2Jrunner', '--json']);
    const second = JSON.parse(labelled.stdout) as { id: string; key: string };
    expect((await trawl(['keys', 'revoke', first.id])).code).toBe(0);

    const listed = await trawl(['keys', 'list', user]);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^key\s+user\s+state\s+created\s+label$/);
    expect(lines[1]).toMatch(new RegExp(`^${first.id}\\s+${user}\\s+revoked \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d\\s+\\d{4}-`));
    expect(lines[2]).toMatch(new RegExp(`^${second.id}\\s+${user}\\s+active\\s+\\d{4}-.*ci \\[2Jrunner$`));
    expect(lines).toHaveLength(3);
    expect(listed.stdout).not.toMatch(CONTROLS);
    for (const secret of [first.key, second.key]) expect(listed.stdout).not.toContain(secret.slice(6, 20));

    const json = JSON.parse((await trawl(['keys', 'list', user, '--json'])).stdout) as Record<string, unknown>[];
    expect(json.map((k) => [k.id, k.user_id, k.label, k.revoked_at === null])).toEqual([
      [first.id, user, null, false],
      [second.id, user, 'ci \x1b[2Jrunner', true],
    ]);
    expect(Object.keys(json[0]!).sort()).toEqual(['created_at', 'id', 'label', 'revoked_at', 'user_id']);
    expect((await trawl(['keys', 'list', `nobody-${randomUUID().slice(0, 6)}`])).stdout).toContain('no keys of nobody-');
    // Without a user: every key, these among them.
    const all = await trawl(['keys', 'list', '--json']);
    expect((JSON.parse(all.stdout) as { id: string }[]).map((k) => k.id)).toEqual(expect.arrayContaining([first.id, second.id]));
  });

  it('keys revoke: the key is refused (401) from then on', async () => {
    const { id, key } = await newKey(`revoked-${randomUUID().slice(0, 6)}`);
    const as = { TRAWL_API_KEY: key };
    expect((await trawl(['webhooks', 'list'], as)).code).toBe(0);

    const revoked = await trawl(['keys', 'revoke', id]);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toBe(`${id}: revoked\n`);
    const refused = await trawl(['webhooks', 'list'], as);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('UNAUTHENTICATED, HTTP 401');

    const twice = await trawl(['keys', 'revoke', id, '--json']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('no active key');
    expect((await trawl(['keys', 'revoke', 'trawl_not-an-id'])).code).toBe(2);
  });
});
