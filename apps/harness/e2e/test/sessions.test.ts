/**
 * Sessions and logins end to end (issue 33): the hard site's members' area — a consent wall, a
 * login form with a CSRF token, member pages that need the session cookie — crawled by a frontier
 * and real workers with a pool of 3 sessions and a form login whose credentials are sealed in the
 * spec. Every item comes out, no member page is ever fetched without a valid session, each session
 * logs in once; a worker SIGKILLed mid-crawl loses nothing and its successor resumes the sessions
 * from trawl.sessions (at most one more login per session); a wrong password fails the job
 * LOGIN_FAILED. No session cookie and no credential is in clear in trawl.sessions or any log.
 */
import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHardSite, expectedMembers, isMemberPage, membersRecord, type HardSite } from '@trawl/demo-site';
import type { CrawlSpec, ItemExtracted, JobFailed, PageFetched, SessionUpdated } from '@trawl/schemas';
import { readEvents, readTopics, type LoggedEvent } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { CREDENTIAL_CONTEXT, secretBoxFromEnv } from '@trawl/store/secrets';
import { Pipeline } from '../src/pipeline.ts';

const SESSIONS = 3;
let pipeline: Pipeline;

beforeAll(async () => {
  // A killed worker's partitions move after 6 s, not the default 30.
  pipeline = await Pipeline.start({ env: { TRAWL_FETCH_RETRY_DELAYS_MS: '300,600,900', TRAWL_SESSION_TIMEOUT_MS: '6000' } });
  pipeline.spawn('frontier');
}, 120_000);

afterAll(async () => {
  await pipeline?.stop();
});

let site: HardSite | undefined;
/** The worker of the first tests; the last one kills it. */
let worker: ReturnType<Pipeline['spawn']> | undefined;
afterEach(async () => {
  await site?.close();
  site = undefined;
});

function spec(origin: string, password: string): CrawlSpec {
  const box = secretBoxFromEnv();
  const seal = (v: string) => box.seal(v, CREDENTIAL_CONTEXT);
  return {
    ...crawlSpec(null, { depth: 2, max_pages: 100 }),
    sitemap: 'skip',
    user_agent: `${expectedMembers.userAgentToken}/1.0 (+https://ops.example)`,
    item_root: expectedMembers.itemSelector,
    item_fields: [{ name: 'name', selector: expectedMembers.nameSelector, attribute: null, xpath: null, transforms: [] }],
    // Slow enough that a worker can be killed mid-crawl.
    host_delay_ms: 150,
    host_concurrency: 2,
    sessions: SESSIONS,
    login: {
      kind: 'form',
      url: `${origin}${expectedMembers.loginUrl}`,
      form_selector: expectedMembers.formSelector,
      fields: { username: seal(expectedMembers.username), password: seal(password) },
      actions: [],
      success_selector: expectedMembers.successSelector,
      success_url_pattern: null,
      failure_text: expectedMembers.failureText,
    },
  };
}

async function dispatch(origin: string, password: string): Promise<string> {
  const jobId = randomUUID();
  const start = `${origin}${expectedMembers.entry}`;
  await pipeline.producer.emit(
    'JobDispatched',
    { job_id: jobId, user_id: 'e2e', target_id: null, schedule_id: null, search_url: start, start_urls: [start], keywords: [], location: null, spec: spec(origin, password), attempt: 1, params: {} },
    { topic: pipeline.topics.jobs },
  );
  return jobId;
}

const ofJob = (events: LoggedEvent[], name: string, jobId: string) => events.filter((e) => e.event.name === name && (e.event.value as { job_id: string }).job_id === jobId).map((e) => e.event.value);
const ended = (jobId: string) => (events: LoggedEvent[]) => ofJob(events, 'JobCompleted', jobId).length + ofJob(events, 'JobFailed', jobId).length > 0;

/** The member pages were all fetched with a valid session, and every item came out. */
function expectEveryItemBehindTheLogin(events: LoggedEvent[], jobId: string, origin: string): void {
  const completed = ofJob(events, 'JobCompleted', jobId) as { outcome: string; pages_failed: number }[];
  expect(completed, JSON.stringify(ofJob(events, 'JobFailed', jobId))).toHaveLength(1);
  expect(completed[0]).toMatchObject({ outcome: 'finished', pages_failed: 0 });
  const fetched = (ofJob(events, 'PageFetched', jobId) as PageFetched[]).map((p) => new URL(p.url).pathname);
  expect(new Set(fetched)).toEqual(new Set(expectedMembers.pages));
  const names = new Set((ofJob(events, 'ItemExtracted', jobId) as ItemExtracted[]).map((i) => i.fields.name));
  expect([...names].sort()).toEqual([...expectedMembers.names].sort());
  const memberRequests = membersRecord(origin).requests.filter((r) => isMemberPage(r.path));
  expect(memberRequests.length).toBeGreaterThanOrEqual(expectedMembers.pages.length);
  expect(memberRequests.filter((r) => !r.valid)).toEqual([]);
}

async function sessionRecords(): Promise<string> {
  const records = await readTopics(pipeline.kafka, [pipeline.topics.sessions]);
  return records.map((r) => `${r.key?.toString() ?? ''} ${r.value?.toString('latin1') ?? ''}`).join('\n');
}

describe('a members area behind a consent wall and a CSRF login, with a pool of sessions', () => {
  it('gives every item, no member page without the session, one login per session, nothing in clear', async () => {
    site = await createHardSite();
    worker = pipeline.spawn('worker');
    await pipeline.groupSettled('trawl-worker', 1);
    const jobId = await dispatch(site.origin, expectedMembers.password);
    const events = await pipeline.waitFor(ended(jobId), 90_000, `the end of ${jobId}`);
    expectEveryItemBehindTheLogin(events, jobId, site.origin);
    const record = membersRecord(site.origin);
    expect(record.logins.length).toBeGreaterThanOrEqual(1);
    expect(record.logins.length).toBeLessThanOrEqual(SESSIONS);
    expect(record.failedLogins).toBe(0);

    // Sealed: neither a session cookie the site issued nor a credential is readable in the topic or a log.
    const raw = await sessionRecords();
    expect(raw).toContain('tsec1.');
    for (const secret of [...record.logins, expectedMembers.password]) {
      expect(raw).not.toContain(secret);
      for (const child of pipeline.children) expect(readFileSync(child.logFile, 'utf8'), child.app).not.toContain(secret);
    }
  }, 120_000);

  it('a wrong password ends the job LOGIN_FAILED, saying why, without the password', async () => {
    site = await createHardSite();
    const wrong = 'not-the-password-5c1e';
    const jobId = await dispatch(site.origin, wrong);
    const events = await pipeline.waitFor(ended(jobId), 90_000, `the end of ${jobId}`);
    const failed = ofJob(events, 'JobFailed', jobId) as JobFailed[];
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error_code).toBe('LOGIN_FAILED');
    expect(failed[0]!.reason).toMatch(/failure text/);
    expect(JSON.stringify(events.map((e) => e.event.value))).not.toContain(wrong);
    const record = membersRecord(site.origin);
    expect(record.logins).toEqual([]);
    // Once per session at most: a failed login is remembered, not repeated for every page.
    expect(record.failedLogins).toBeLessThanOrEqual(SESSIONS);
    expect(record.requests.filter((r) => isMemberPage(r.path) && r.valid)).toEqual([]);
  }, 120_000);
  it('a worker SIGKILLed mid-crawl: the job completes with every item, the sessions resume (at most one more login each)', async () => {
    site = await createHardSite();
    const first = worker!;
    const jobId = await dispatch(site.origin, expectedMembers.password);
    const before = await pipeline.waitFor((events) => ofJob(events, 'PageFetched', jobId).length >= 2, 60_000, 'the first pages');
    await pipeline.kill(first);
    // Killed mid-crawl: with pages still to fetch, and sessions logged in.
    expect(ofJob(before, 'JobCompleted', jobId)).toEqual([]);
    expect(membersRecord(site.origin).logins.length).toBeGreaterThan(0);
    const second = pipeline.spawn('worker');
    const events = await pipeline.waitFor(ended(jobId), 120_000, `the end of ${jobId}`);
    expectEveryItemBehindTheLogin(events, jobId, site.origin);
    const record = membersRecord(site.origin);
    expect(record.logins.length).toBeLessThanOrEqual(2 * SESSIONS);
    // Per session, as trawl.sessions says: logged in at most twice (once more after the crash).
    const updates = ofJob(await readEvents(pipeline.kafka, pipeline.codec, [pipeline.topics.sessions]), 'SessionUpdated', jobId) as SessionUpdated[];
    expect(updates.length).toBeGreaterThan(0);
    for (const u of updates) expect(u.logins, `session ${u.session}`).toBeLessThanOrEqual(2);
    await pipeline.kill(second);
  }, 180_000);

});
