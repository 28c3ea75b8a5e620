/**
 * A message that its consumer's handler never finishes — the handler exits the process, blocks the
 * event loop (the loop watchdog kills it), or never returns (its budget stops it) — restarted by
 * this test as a supervisor would: after TRAWL_MAX_DELIVERIES (3) deliveries the message is in the
 * dead-letter topic as `poison`, the partition has moved past it (committed to its end), and every
 * other message was processed. The same for a projection whose `apply` exits on one event.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { samples } from '@trawl/schemas';
import { endOffsets, endpoints, readProjectionOffsets, readTopics, TRAWL_HEADERS, type LoggedMessage } from '@trawl/streams';
import { committedOffsets, testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

const FIXTURE = fileURLToPath(new URL('./fixtures/poison-consumer.ts', import.meta.url));
const MESSAGES = 20;
const POISON = 'f-7';
const MAX_DELIVERIES = 3;

let h: Harness;
let dir: string;
let db: pg.Pool;

beforeAll(async () => {
  h = await harness('poison-deliveries', ['exit', 'block', 'hang', 'projection', 'dlq'].map((name) => ({ name, partitions: 1 })), { postgres: true });
  dir = mkdtempSync(join(tmpdir(), 'trawl-poison-'));
  db = new pg.Pool({ connectionString: endpoints().databaseUrl, max: 2 });
  for (const topic of ['exit', 'block', 'hang', 'projection']) {
    for (let i = 0; i < MESSAGES; i++) {
      await emitSample(h.producer, 'FetchRequested', { fetch_id: `f-${i}` }, { topic: h.topics.names[topic]!, key: 'one.host' }, samples.FetchRequested);
    }
  }
});

afterAll(async () => {
  await db?.end();
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  readonly out: string;
  readonly groupId: string;
  readonly topic: string;
  /** Processes that ended on their own (the poison killed them), in order. */
  readonly deaths: (number | string)[];
}

function lines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

function start(run: Run, env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: {
      ...process.env,
      TOPIC: run.topic,
      DLQ_TOPIC: h.topics.names.dlq!,
      GROUP_ID: run.groupId,
      OUT_FILE: run.out,
      POISON_ID: POISON,
      TRAWL_MAX_DELIVERIES: String(MAX_DELIVERIES),
      TRAWL_LOG_LEVEL: process.env.TRAWL_TEST_LOG_LEVEL ?? 'error',
      ...env,
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** The dead letters of `topic` in the test's dead-letter topic. */
async function deadLettersOf(topic: string): Promise<LoggedMessage[]> {
  return (await readTopics(h.kafka, [h.topics.names.dlq!])).filter((m) => m.headers[TRAWL_HEADERS.originalTopic]?.toString() === topic);
}

/** Where the group (or the projection, whose offsets live in Postgres) stands on the topic's one partition. */
async function position(run: Run): Promise<bigint | undefined> {
  if (run.topic === h.topics.names.projection) return (await readProjectionOffsets(db, run.groupId)).find((o) => o.topic === run.topic)?.nextOffset;
  return (await committedOffsets(h.kafka, run.groupId, run.topic)).get(0);
}

/**
 * Runs the consumer as a supervisor would — started again each time it dies — until every
 * message but the poison is done and the poison is dead-lettered; then stops it gracefully.
 */
async function superviseUntilDone(run: Run, env: Record<string, string>, timeoutMs = 150_000): Promise<void> {
  const started = Date.now();
  let child = start(run, env);
  let exited = false;
  let stopping = false;
  const watch = (c: ChildProcess) =>
    c.once('exit', (code, signal) => {
      if (c !== child || stopping) return;
      exited = true;
      run.deaths.push(code ?? signal ?? 'unknown');
    });
  watch(child);
  try {
    await waitFor(
      async () => {
        if (exited) {
          exited = false;
          child = start(run, env);
          watch(child);
        }
        const done = new Set(lines(run.out).filter((l) => l.startsWith('done ')).map((l) => l.slice(5)));
        return done.size === MESSAGES - 1 && (await deadLettersOf(run.topic)).length > 0 && (await position(run)) === BigInt(MESSAGES);
      },
      { timeoutMs, intervalMs: 250, message: () => `every message done, the poison dead-lettered and the partition past it (deaths so far: ${run.deaths.join(', ')}); out:\n${lines(run.out).slice(-20).join('\n')}` },
    );
    console.info(`POISON streams ${run.topic.split('.').pop()} ${JSON.stringify({ deaths: run.deaths, deliveries: lines(run.out).filter((l) => l === `start ${POISON}`).length, toPoisonAndPastMs: Date.now() - started })}`);
  } finally {
    stopping = true;
    const last = child;
    await new Promise<void>((resolve) => {
      if (last.exitCode !== null || last.signalCode !== null) return resolve();
      last.once('exit', () => resolve());
      last.kill('SIGTERM');
    });
  }
}

async function expectPoisoned(run: Run, reason: RegExp): Promise<void> {
  const dead = await deadLettersOf(run.topic);
  expect(dead.map((m) => `offset ${m.headers[TRAWL_HEADERS.originalOffset]}: ${m.headers[TRAWL_HEADERS.errorMessage]}`)).toHaveLength(1);
  const [d] = dead;
  const original = (await readTopics(h.kafka, [run.topic])).find((m) => m.offset === d!.headers[TRAWL_HEADERS.originalOffset]?.toString());
  expect(original, 'the dead letter is the poison, byte for byte').toBeDefined();
  expect(d!.value!.equals(original!.value!)).toBe(true);
  expect(d!.headers[TRAWL_HEADERS.deadLetterReason]?.toString()).toBe('poison');
  expect(d!.headers[TRAWL_HEADERS.errorCode]?.toString()).toBe('TRAWL_POISON');
  expect(d!.headers[TRAWL_HEADERS.errorMessage]?.toString()).toMatch(reason);
  // Delivered exactly TRAWL_MAX_DELIVERIES times, never again once dead-lettered.
  expect(lines(run.out).filter((l) => l === `start ${POISON}`)).toHaveLength(MAX_DELIVERIES);
  // Every other message processed.
  const done = new Set(lines(run.out).filter((l) => l.startsWith('done ')).map((l) => l.slice(5)));
  expect([...done].sort()).toEqual(Array.from({ length: MESSAGES }, (_, i) => `f-${i}`).filter((id) => id !== POISON).sort());
}

/** The partition moved past the poison: the group committed the topic's end. */
async function expectCommittedToEnd(run: Run): Promise<void> {
  const ends = await endOffsets(h.kafka, [run.topic]);
  expect((await committedOffsets(h.kafka, run.groupId, run.topic)).get(0)).toBe(ends.get(`${run.topic}:0`));
}

function newRun(topic: string): Run {
  return { out: join(dir, `${topic}.log`), groupId: testId(`g-poison-${topic}`), topic: h.topics.names[topic]!, deaths: [] };
}

describe('a message whose handler never finishes', () => {
  it(`exits the process: after ${MAX_DELIVERIES} deliveries it is dead-lettered as poison and the partition moves past it`, async () => {
    const run = newRun('exit');
    await superviseUntilDone(run, { ACTION: 'exit' });
    expect(run.deaths).toEqual([3, 3, 3]);
    await expectPoisoned(run, /delivered 3 times without an outcome; its consumer's process ended while it ran/);
    await expectCommittedToEnd(run);
  });

  it('blocks the event loop: the loop watchdog kills the process, and after 3 deliveries it is poison', async () => {
    const run = newRun('block');
    await superviseUntilDone(run, { ACTION: 'block', TRAWL_LOOP_LIMIT_MS: '1500' });
    expect(run.deaths).toEqual(['SIGKILL', 'SIGKILL', 'SIGKILL']);
    await expectPoisoned(run, /delivered 3 times without an outcome/);
    await expectCommittedToEnd(run);
  });

  it('never returns: its budget stops it three times, then it is poison, and the process never dies', async () => {
    const run = newRun('hang');
    await superviseUntilDone(run, { ACTION: 'hang', BUDGET_MS: '1000' });
    expect(run.deaths).toEqual([]);
    await expectPoisoned(run, /delivered 3 times without an outcome; last: the poison ran past its budget of 1000 ms/);
    await expectCommittedToEnd(run);
  });
});

describe('an event whose projection never finishes applying it', () => {
  it('exits the process: after 3 deliveries it is dead-lettered as poison, skipped, and every other event applied once', async () => {
    const run = newRun('projection');
    const table = `t_${run.groupId.replace(/[^a-z0-9]/g, '_')}`;
    try {
      await superviseUntilDone(run, { MODE: 'projection', ACTION: 'exit', TABLE: table });
      expect(run.deaths).toEqual([3, 3, 3]);
      const dead = await deadLettersOf(run.topic);
      expect(dead).toHaveLength(1);
      expect(dead[0]!.headers[TRAWL_HEADERS.deadLetterReason]?.toString()).toBe('poison');
      expect(lines(run.out).filter((l) => l === `start ${POISON}`)).toHaveLength(MAX_DELIVERIES);
      const { rows } = await db.query<{ id: string; n: string }>(`SELECT id, count(*) AS n FROM ${table} GROUP BY id ORDER BY id`);
      expect(rows.map((r) => r.id).sort()).toEqual(Array.from({ length: MESSAGES }, (_, i) => `f-${i}`).filter((id) => id !== POISON).sort());
      expect(rows.every((r) => r.n === '1')).toBe(true);
      const ends = await endOffsets(h.kafka, [run.topic]);
      expect((await readProjectionOffsets(db, run.groupId)).find((o) => o.topic === run.topic)?.nextOffset).toBe(ends.get(`${run.topic}:0`));
    } finally {
      await db.query(`DROP TABLE IF EXISTS ${table}`);
    }
  });
});
