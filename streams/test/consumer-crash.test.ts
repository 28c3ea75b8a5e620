import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { samples } from '@trawl/schemas';
import { endOffsets } from '@trawl/streams';
import { committedOffsets, testId, waitFor } from '@trawl/streams/testing';
import { emitSample, harness, type Harness } from './support.ts';

const PARTITIONS = 3;
const MESSAGES = 3000;
const MAX_UNCOMMITTED = 200;
const FIXTURE = fileURLToPath(new URL('./fixtures/crash-consumer.ts', import.meta.url));

let h: Harness;
let dir: string;

beforeAll(async () => {
  h = await harness('consumer-crash', [{ name: 'work', partitions: PARTITIONS }, { name: 'dlq' }]);
  dir = mkdtempSync(join(tmpdir(), 'trawl-crash-'));
  const topic = h.topics.names.work!;
  const sends: Promise<string>[] = [];
  for (let i = 0; i < MESSAGES; i++) {
    sends.push(emitSample(h.producer, 'FetchRequested', { fetch_id: `f-${i}` }, { topic, key: `host-${i % 50}` }, samples.FetchRequested));
  }
  await Promise.all(sends);
});

afterAll(async () => {
  await h?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function startConsumer(groupId: string, out: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', FIXTURE], {
    cwd: fileURLToPath(new URL('..', import.meta.url)),
    env: {
      ...process.env,
      TOPIC: h.topics.names.work!,
      DLQ_TOPIC: h.topics.names.dlq!,
      GROUP_ID: groupId,
      OUT_FILE: out,
      HANDLER_MAX_MS: '30',
      CONCURRENCY: '16',
      MAX_UNCOMMITTED: String(MAX_UNCOMMITTED),
      TRAWL_LOG_LEVEL: process.env.TRAWL_TEST_LOG_LEVEL ?? 'error',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

function processed(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });
}

describe('a consumer killed mid-batch', () => {
  it('loses nothing: commits never pass unfinished work, and the next consumer resumes from them', async () => {
    const topic = h.topics.names.work!;
    const groupId = testId('g-crash');
    const outA = join(dir, 'a.log');
    const outB = join(dir, 'b.log');

    const a = startConsumer(groupId, outA);
    try {
      await waitFor(() => processed(outA).length >= MESSAGES / 4, { timeoutMs: 45_000, message: 'the first consumer to be well under way' });
    } finally {
      a.kill('SIGKILL');
    }
    await exited(a);

    // Commits never ran ahead of unfinished work: every offset below a committed one was finished.
    const doneByA = new Set(processed(outA));
    const committedAtKill = await committedOffsets(h.kafka, groupId, topic);
    let committedTotal = 0n;
    for (let p = 0; p < PARTITIONS; p++) {
      const committed = committedAtKill.get(p) ?? -1n;
      for (let o = 0n; o < committed; o++) expect(doneByA.has(`${p}:${o}`), `partition ${p} offset ${o} committed but not processed`).toBe(true);
      if (committed > 0n) committedTotal += committed;
    }
    expect(committedTotal).toBeGreaterThan(0n);
    expect(doneByA.size).toBeLessThan(MESSAGES); // killed mid-way

    const b = startConsumer(groupId, outB);
    const all = new Set<string>();
    try {
      await waitFor(
        () => {
          all.clear();
          for (const line of [...processed(outA), ...processed(outB)]) all.add(line);
          return all.size === MESSAGES;
        },
        { timeoutMs: 60_000, message: () => `every message processed (have ${all.size} of ${MESSAGES})` },
      );
    } finally {
      b.kill('SIGTERM');
    }
    expect(await exited(b)).toBe(0);

    // The second consumer started from the first one's commits, never below them.
    const byB = processed(outB);
    for (const line of byB) {
      const [p, o] = line.split(':').map(BigInt) as [bigint, bigint];
      expect(o >= (committedAtKill.get(Number(p)) ?? 0n), `B re-processed ${line} below the commit`).toBe(true);
    }
    // Duplicates stay within the at-least-once bound: the window of each partition.
    const duplicates = processed(outA).length + byB.length - MESSAGES;
    expect(duplicates).toBeLessThanOrEqual(MAX_UNCOMMITTED * PARTITIONS);
    // Graceful stop committed everything.
    const ends = await endOffsets(h.kafka, [topic]);
    const finalCommits = await committedOffsets(h.kafka, groupId, topic);
    for (let p = 0; p < PARTITIONS; p++) expect(finalCommits.get(p)).toBe(ends.get(`${topic}:${p}`));
  });
});
