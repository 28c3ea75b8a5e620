/**
 * The `trawl` command as a user runs it (`node bin/trawl.js …`, through tsx), against a real API
 * on a real socket, the real Postgres and Kafka: keys, crawl (detached and followed to the end),
 * jobs and logs.
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import trawlConsole from '@trawl/console';
import { buildApp, API_MIGRATIONS, API_MIGRATION_OWNER } from '@trawl/api';
import { EventProducer, provisionTopics } from '@trawl/streams';
import { testKafka, testLogger } from '@trawl/streams/testing';
import { CONFIG_MIGRATIONS, migrate } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { PG_REPLAY_LOCK, setupReadModels } from '@trawl/projector-pg';
import { mainOf, SERVICE_APPS } from '../src/services/catalogue.ts';

const run = promisify(execFile);
const BIN = join(import.meta.dirname, '..', 'bin', 'trawl.js');

let db: TestDatabase;
let app: FastifyInstance;
let producer: EventProducer;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  db = await createTestDatabase('trawl_cli_test');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
  await setupReadModels(db.pool);
  const logger = testLogger('cli-test');
  const kafka = testKafka('cli-test', logger);
  await provisionTopics(kafka);
  producer = new EventProducer({ kafka, logger });
  await producer.connect();
  app = await buildApp({ pool: db.pool, producer, config: { ssePollMs: 50 }, mount: (app) => app.register(trawlConsole) });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  env = { ...process.env, DATABASE_URL: db.url, TRAWL_API_URL: url, NO_COLOR: '1', TRAWL_HOME: join(import.meta.dirname, '..', '.test-home') };
});
afterAll(async () => {
  await app?.close();
  await producer?.disconnect();
  await db?.drop();
});

function trawl(args: string[], extra: NodeJS.ProcessEnv = {}) {
  return run(process.execPath, [BIN, ...args], { env: { ...env, ...extra }, timeout: 60_000 }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

async function newKey(user: string): Promise<string> {
  const r = await trawl(['keys', 'create', user]);
  expect(r.code, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe('trawl', () => {
  it('keys create prints the new key alone on stdout', async () => {
    const r = await trawl(['keys', 'create', `alice-${randomUUID().slice(0, 6)}`]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^trawl_[A-Za-z0-9_-]{43}\n$/);
    const bad = await trawl(['keys', 'create', 'not a user']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('user id');
  });

  it('usage errors exit 2', async () => {
    expect((await trawl(['frobnicate'])).code).toBe(2);
    expect((await trawl(['crawl'])).code).toBe(2);
    expect((await trawl(['crawl', 'http://a.test/', '--depth', '99'], { TRAWL_API_KEY: 'x' })).code).toBe(2);
    const badMode = await trawl(['crawl', 'http://a.test/', '--sitemap', 'all'], { TRAWL_API_KEY: 'x' });
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain('--sitemap must be include, only or skip');
    expect((await trawl(['--help'])).stdout).toContain('usage: trawl');
  });

  it('scrape and map refuse what the API refuses, with its code, and check their usage', async () => {
    const key = await newKey(`scraper-${randomUUID().slice(0, 6)}`);
    expect((await trawl(['scrape'], { TRAWL_API_KEY: key })).code).toBe(2);
    expect((await trawl(['map', 'http://a.test/', '--limit', '9999'], { TRAWL_API_KEY: key })).code).toBe(2);
    const format = await trawl(['scrape', 'http://10.0.0.1/', '--format', 'markdown,rawHtml'], { TRAWL_API_KEY: key });
    expect(format.code).toBe(1);
    expect(format.stderr).toContain('UNSUPPORTED_FORMAT');
    for (const command of ['scrape', 'map']) {
      const refused = await trawl([command, 'http://10.0.0.1/'], { TRAWL_API_KEY: key });
      expect(refused.code, command).toBe(1);
      expect(refused.stderr, command).toContain('URL_REFUSED');
    }
  });

  it('crawl --detach prints the job id; jobs lists it', async () => {
    const key = await newKey(`bob-${randomUUID().slice(0, 6)}`);
    const r = await trawl(['crawl', 'http://127.0.0.1:8090/jobs?page=1', '--depth', '2', '--detach'], { TRAWL_API_KEY: key });
    expect(r.code, r.stderr).toBe(0);
    const jobId = r.stdout.trim();
    expect(jobId).toMatch(/^[0-9a-f-]{36}$/);
    const list = await trawl(['jobs'], { TRAWL_API_KEY: key });
    expect(list.stdout).toContain(jobId);
    expect(list.stdout).toContain('pending');
    const json = JSON.parse((await trawl(['jobs', '--json'], { TRAWL_API_KEY: key })).stdout);
    expect(json[0].job_id).toBe(jobId);
  });

  it('crawl sends its reach and link flags in the body: the API takes good ones and refuses bad ones with their code', async () => {
    const key = await newKey(`flags-${randomUUID().slice(0, 6)}`);
    const url = 'http://127.0.0.1:8090/jobs?page=3';
    const good = await trawl(['crawl', url, '--detach', '--header', 'X-Api-Key: k-1', '--user-agent', 'FlagBot/1.0', '--locale', 'fr-CH', '--include', '/jobs', '--exclude', 'sort=', '--scope', 'same_domain', '--follow-nofollow'], { TRAWL_API_KEY: key });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
    for (const [flags, code] of [
      [['--include', '/jobs(?!/open)'], 'UNSUPPORTED_PATTERN'],
      [['--header', 'Host: evil.example'], 'HEADER_NOT_ALLOWED'],
    ] as const) {
      const bad = await trawl(['crawl', url, '--detach', ...flags], { TRAWL_API_KEY: key });
      expect(bad.code, flags.join(' ')).toBe(1);
      expect(bad.stderr, flags.join(' ')).toContain(code);
    }
  });

  it('crawl follows the job to its end and prints a summary', async () => {
    const user = `carol-${randomUUID().slice(0, 6)}`;
    const key = await newKey(user);
    const child = trawl(['crawl', 'http://127.0.0.1:8090/jobs?page=2', '--depth', '0'], { TRAWL_API_KEY: key });
    // Play the projector: once the job is accepted, it finishes.
    let jobId: string | undefined;
    // (A CLI child starting tsx on a busy machine may take many seconds.)
    for (const until = Date.now() + 60_000; !jobId && Date.now() < until; ) {
      const { rows } = await db.pool.query('SELECT job_id FROM api_jobs WHERE user_id = $1', [user]);
      jobId = rows[0]?.job_id;
      if (!jobId) await new Promise((r) => setTimeout(r, 100));
    }
    if (!jobId) throw new Error('the CLI did not submit its crawl within 60 s');
    await db.pool.query(
      `INSERT INTO jobs (job_id, user_id, status, start_urls, requested_at, dispatched_at, finished_at, pages_fetched, items_extracted, bytes, urls_seen, updated_at)
       VALUES ($1, $2, 'finished', '["http://127.0.0.1:8090/jobs?page=2"]', now() - interval '2 seconds', now(), now(), 1, 10, 2048, 1, now())`,
      [jobId, user],
    );
    const r = await child;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`job ${jobId} finished`);
    expect(r.stdout).toMatch(/items\s+10/);
  });

  it('logs prints the job log and ends with its status', async () => {
    const user = `dave-${randomUUID().slice(0, 6)}`;
    const key = await newKey(user);
    const jobId = randomUUID();
    await db.pool.query(
      `INSERT INTO jobs (job_id, user_id, status, requested_at, log_seq, pages_fetched, updated_at) VALUES ($1, $2, 'failed', now(), 2, 0, now())`,
      [jobId, user],
    );
    await db.pool.query(
      `INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id) VALUES
         ($1, 1, now(), 'info', 'crawl requested', 'CrawlRequested', $2), ($1, 2, now(), 'error', 'every start URL refused', 'JobFailed', $3)`,
      [jobId, randomUUID(), randomUUID()],
    );
    const r = await trawl(['logs', jobId], { TRAWL_API_KEY: key });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/INFO\s+crawl requested/);
    expect(r.stdout).toMatch(/ERROR every start URL refused/);
    expect(r.stdout).toContain('— failed');
    const other = await trawl(['logs', jobId], { TRAWL_API_KEY: await newKey(`eve-${randomUUID().slice(0, 6)}`) });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('JOB_NOT_FOUND');
  });

  it('logs and jobs print crawled text without the control characters in it', async () => {
    const user = `mallory-${randomUUID().slice(0, 6)}`;
    const key = await newKey(user);
    const jobId = randomUUID();
    const hostile = '\x1b]0;pwned\x07\x1b[2J\x9b31m\u202Egnp.exe\nINFO  forged line';
    await db.pool.query(
      `INSERT INTO jobs (job_id, user_id, status, start_urls, requested_at, log_seq, pages_fetched, updated_at) VALUES ($1, $2, 'failed', $3, now(), 1, 0, now())`,
      [jobId, user, JSON.stringify([`http://e.test/${hostile}`])],
    );
    await db.pool.query(`INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id) VALUES ($1, 1, now(), 'error', $2, 'PageFailed', $3)`, [jobId, `page failed: ${hostile}`, randomUUID()]);
    const logs = await trawl(['logs', jobId], { TRAWL_API_KEY: key });
    const jobs = await trawl(['jobs'], { TRAWL_API_KEY: key });
    for (const out of [logs.stdout, jobs.stdout]) {
      expect(out).toContain('gnp.exe INFO  forged line');
      // eslint-disable-next-line no-control-regex -- what must not reach the terminal
      expect(out).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]/);
    }
    expect(logs.stdout.split('\n').filter((l) => l.includes('forged'))).toHaveLength(1);
  });

  it('build compiles every service into $TRAWL_HOME/build, and a compiled service runs under plain node', async () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-cli-build-'));
    try {
      const r = await trawl(['build'], { TRAWL_HOME: home });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(new RegExp(`✓ ${SERVICE_APPS.length} apps compiled in \\d+ ms`));
      for (const app of SERVICE_APPS) expect(existsSync(join(home, 'build', app, 'main.mjs')), app).toBe(true);
      // The demo site needs nothing else: up in a process with no TypeScript loader, then stopped.
      const site = spawn(process.execPath, [join(home, 'build', 'demo-site', 'main.mjs')], { env: { ...env, TRAWL_DEMO_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
      const listening = await new Promise<string>((resolve, reject) => {
        let out = '';
        site.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('listening')) resolve(out);
        });
        site.once('exit', (code) => reject(new Error(`demo site exited with ${code}: ${out}`)));
      });
      site.kill('SIGTERM');
      expect(listening).toMatch(/"name":"demo-site".*"url":"http:\/\/127\.0\.0\.1:\d+"/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('down stops a service started from source (as services ran before they were compiled) and leaves the stack', async () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-cli-down-'));
    const site = spawn(process.execPath, ['--import', 'tsx', mainOf('demo-site')], { env: { ...env, TRAWL_DEMO_PORT: '0' }, stdio: 'ignore' });
    try {
      mkdirSync(join(home, 'run'), { recursive: true });
      writeFileSync(join(home, 'run', 'demo-site.pid'), `${site.pid}\n`);
      const exited = new Promise((resolve) => site.once('exit', resolve));
      const r = await trawl(['down', '--keep-stack'], { TRAWL_HOME: home });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(/↓ demo-site stopped/);
      await exited;
    } finally {
      site.kill('SIGKILL');
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('replay explains when a projector package is missing', async () => {
    const r = await trawl(['replay', 'xx']);
    expect(r.code).toBe(2);
  });

  it('replay says in one line, with the projector\'s code, why it did not run', async () => {
    // Another replay holds the lock: the second refuses at once, before reading anything.
    const holder = await db.pool.connect();
    try {
      await holder.query('SELECT pg_advisory_lock(hashtext($1))', [PG_REPLAY_LOCK]);
      const r = await trawl(['replay', 'pg']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^trawl: replay pg failed \(PG_REPLAY_IN_PROGRESS\): another replay of the Postgres read models is running$/m);
      expect(r.stderr).not.toContain('    at ');
    } finally {
      await holder.query('SELECT pg_advisory_unlock(hashtext($1))', [PG_REPLAY_LOCK]);
      holder.release();
    }
  });
});
