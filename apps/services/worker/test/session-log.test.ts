/**
 * Jobs' sessions on a compacted topic (session-log.ts) against the real Kafka and registry: what
 * one worker saves, another worker — started after, as after a crash — reads back whole, the
 * highest version winning; and no cookie value is in clear in the topic's records.
 */
import { randomBytes } from 'node:crypto';
import { EventCodec, EventProducer, readTopics } from '@trawl/streams';
import { createTestTopics, testKafka, testLogger, type TestTopics } from '@trawl/streams/testing';
import { SessionJar, type SessionState } from '@trawl/crawl';
import { SecretBox } from '@trawl/store/secrets';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionLog } from '../src/session-log.ts';

const logger = testLogger('session-log');
const kafka = testKafka('session-log', logger);
const box = new SecretBox(randomBytes(32));
let topics: TestTopics;
let producer: EventProducer;
const logs: SessionLog[] = [];

beforeAll(async () => {
  topics = await createTestTopics(kafka, [{ name: 'trawl.sessions', partitions: 3, configs: { 'cleanup.policy': 'compact,delete', 'retention.ms': String(30 * 86_400_000) } }]);
  producer = new EventProducer({ kafka, logger, codec: new EventCodec() });
  await producer.connect();
});

afterAll(async () => {
  await Promise.all(logs.map((l) => l.stop()));
  await producer?.disconnect();
  await topics?.delete();
});

async function sessionLog(key: SecretBox = box): Promise<SessionLog> {
  const log = new SessionLog({ kafka, codec: new EventCodec(), logger, producer, box: () => key, topic: topics.names['trawl.sessions']! });
  logs.push(log);
  await log.start();
  return log;
}

function state(jobId: string, session: number, version: number, sid: string): SessionState {
  const jar = SessionJar.fromSpec({ cookies: {} });
  jar.receive('http://site.example/members/login', [`members_sid=${sid}; Path=/members; HttpOnly`]);
  return { jobId, session, generation: 0, version, jar: jar.serialize(), login: 'done', logins: 1, reason: version === 1 ? 'login' : 'cookies' };
}

describe('sessions on trawl.sessions', () => {
  it("are read back by a worker started after the save, the highest version winning, the jar opened as it was", async () => {
    const jobId = `job-${randomBytes(4).toString('hex')}`;
    const first = await sessionLog();
    await first.save(state(jobId, 0, 1, 'sid-old-7c1f'), 'e1');
    await first.save(state(jobId, 0, 2, 'sid-new-2b9a'), 'e2');
    await first.save(state(jobId, 2, 1, 'sid-two-9d0e'), 'e3');
    expect((await first.load(jobId, 0))?.version).toBe(2);

    const second = await sessionLog();
    const zero = await second.load(jobId, 0);
    expect(zero).toMatchObject({ jobId, session: 0, version: 2, login: 'done', logins: 1, reason: 'cookies' });
    expect(SessionJar.deserialize(zero!.jar).cookieHeader('http://site.example/members/')).toBe('members_sid=sid-new-2b9a');
    expect((await second.load(jobId, 2))?.version).toBe(1);
    expect(await second.load(jobId, 1)).toBeUndefined();
  });

  it('starts a session afresh, past its version, when its jar does not open (a key no longer configured)', async () => {
    const jobId = `job-${randomBytes(4).toString('hex')}`;
    await (await sessionLog()).save(state(jobId, 1, 3, 'sid-lost-41aa'), 'e1');
    const other = await sessionLog(new SecretBox(randomBytes(32)));
    expect(await other.load(jobId, 1)).toMatchObject({ jar: '', login: 'none', version: 3, reason: 'unreadable' });
  });

  it('holds no cookie value in clear: the jar is sealed, bound to its session', async () => {
    const raw = await readTopics(kafka, [topics.names['trawl.sessions']!]);
    expect(raw.length).toBeGreaterThanOrEqual(3);
    const text = raw.map((r) => r.value!.toString('latin1')).join('\n');
    for (const sid of ['sid-old-7c1f', 'sid-new-2b9a', 'sid-two-9d0e', 'sid-lost-41aa', 'members_sid']) expect(text).not.toContain(sid);
    expect(text).toContain('tsec1.');
    // Keyed by `<job_id>:<session>`: compaction keeps the latest of each session.
    for (const r of raw) expect(r.key!.toString()).toMatch(/^job-[0-9a-f]{8}:[0-2]$/);
  });
});
