/**
 * Poison messages for the apps' hostile-input tests. Each test runs an app as production does —
 * its own main.ts in a child process — on topics of its own (TRAWL_TOPIC_PREFIX) on the real
 * Kafka and registry, and feeds one of its consumed topics three kinds of garbage made from a valid
 * encoded event: a bad magic byte, a truncated body and 900 KB of random bytes after a valid
 * header (a body Avro cannot read, close to Kafka's 1 MiB message limit), then the valid event
 * itself on the same partition. (A schema id the registry does not know is not garbage: the
 * registry may be wrong, so consumers wait for it — `withUnknownSchemaId` makes one for the tests
 * of that.) A consumer that dead-letters must put each
 * piece of garbage in its dead-letter topic byte for byte, with its origin, and still handle the
 * valid event after it; and it must still be running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Kafka } from 'kafkajs';
import { appDir, repoRoot } from '@trawl/base';
import { catalogueOptions, topicCatalogue } from '../topics/catalogue.ts';
import { provisionTopics } from '../topics/provision.ts';
import { EventCodec } from '../registry/event-codec.ts';
import { EventProducer } from '../producer/event-producer.ts';
import { readTopics, type LoggedMessage } from '../reader/topic-reader.ts';
import { TRAWL_HEADERS } from '../retry/retry-headers.ts';
import { deleteSubjects } from './registry-subjects.ts';
import { deleteTopics } from './test-topics.ts';
import { testKafka, testLogger } from './test-clients.ts';
import { waitFor } from './wait-for.ts';

export const POISON_KINDS = ['bad-magic', 'truncated', 'random-900k'] as const;
export type PoisonKind = (typeof POISON_KINDS)[number];

export interface Poison {
  readonly kind: PoisonKind;
  readonly value: Buffer;
}

/** `valid` (a registry-framed event) with a schema id no registry has given out. */
export function withUnknownSchemaId(valid: Buffer): Buffer {
  const unknownId = Buffer.from(valid);
  unknownId.writeInt32BE(2_000_000_000, 1);
  return unknownId;
}

/** The three kinds of garbage, made from `valid` (a registry-framed event: magic byte, schema id, Avro body). */
export function poisonFrom(valid: Buffer): Poison[] {
  return [
    { kind: 'bad-magic', value: Buffer.concat([Buffer.from([7]), valid.subarray(1)]) },
    { kind: 'truncated', value: valid.subarray(0, 12) },
    { kind: 'random-900k', value: Buffer.concat([valid.subarray(0, 5), randomBytes(900 * 1024)]) },
  ];
}

/** An app's main.ts running in a child process. */
export interface AppProcess {
  readonly child: ChildProcess;
  /** Everything it wrote to stdout and stderr so far. */
  log(): string;
  /** The end of the log, for failure messages. */
  tail(chars?: number): string;
  /** Neither exited nor killed. */
  running(): boolean;
  kill(): void;
}

export interface StartAppOptions {
  /** Added to the test's environment (TRAWL_LOG_LEVEL is `info` unless given). */
  readonly env?: Readonly<Record<string, string>>;
  /** A text the log holds once the app is ready, e.g. '"partitions assigned"'. */
  readonly readyWhen: string;
  readonly timeoutMs?: number;
  /** Runs this file instead of the app's main.ts (a test's variant of the app). */
  readonly script?: string;
}

/** Starts `apps/<role>/<app>/src/main.ts` (or `script`) with tsx, as production runs it, and waits until its log says it is ready. */
export async function startApp(app: string, options: StartAppOptions): Promise<AppProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', options.script ?? join(appDir(app), 'src', 'main.ts')], {
    cwd: repoRoot,
    env: { ...process.env, TRAWL_LOG_LEVEL: 'info', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (d) => (log += String(d)));
  child.stderr!.on('data', (d) => (log += String(d)));
  const handle: AppProcess = {
    child,
    log: () => log,
    tail: (chars = 3000) => log.slice(-chars),
    running: () => child.exitCode === null && child.signalCode === null,
    kill: () => void child.kill('SIGKILL'),
  };
  try {
    await waitFor(
      () => {
        if (!handle.running()) throw new Error(`${app} exited (${child.exitCode ?? child.signalCode}) before it was ready; its log:\n${handle.tail()}`);
        return log.includes(options.readyWhen);
      },
      { timeoutMs: options.timeoutMs ?? 90_000, intervalMs: 250, message: () => `${app} to start; its log:\n${handle.tail()}` },
    );
  } catch (err) {
    handle.kill();
    throw err;
  }
  return handle;
}

/** Where a message landed. */
export interface LogPosition {
  readonly partition: number;
  readonly offset: string;
}

export interface SentPoison {
  readonly topic: string;
  readonly key: string;
  readonly poison: readonly Poison[];
  /** Where the valid event after the garbage landed. */
  readonly valid: LogPosition;
}

const header = (m: LoggedMessage, name: string): string | undefined => m.headers[name]?.toString();

/** The `test-case` header each piece of garbage carries (dead letters keep the original headers). */
export const poisonCase = (topic: string, kind: PoisonKind): string => `${topic}:${kind}`;

/**
 * Sends the garbage made from `valid` to `topic` under `key`, one message at a time and in this
 * order, each with a `test-case` header, then `valid` itself: the same key, so the same partition.
 */
export async function sendPoison(kafka: Kafka, producer: EventProducer, o: { readonly topic: string; readonly key: string; readonly valid: Buffer }): Promise<SentPoison> {
  const poison = poisonFrom(o.valid);
  for (const p of poison) await producer.sendRaw({ topic: o.topic, key: o.key, value: p.value, headers: { 'test-case': poisonCase(o.topic, p.kind) } });
  await producer.sendRaw({ topic: o.topic, key: o.key, value: o.valid });
  const sent = (await readTopics(kafka, [o.topic])).filter((m) => m.key?.toString() === o.key && m.value?.equals(o.valid)).at(-1);
  if (!sent) throw new Error(`the valid event sent to ${o.topic} is not there`);
  return { topic: o.topic, key: o.key, poison, valid: { partition: sent.partition, offset: sent.offset } };
}

/** The dead letters in `deadLetterTopic` whose origin is `topic`. */
export async function deadLettersFrom(kafka: Kafka, deadLetterTopic: string, topic: string): Promise<LoggedMessage[]> {
  return (await readTopics(kafka, [deadLetterTopic])).filter((m) => header(m, TRAWL_HEADERS.originalTopic) === topic);
}

/** What is wrong with the dead letters of `sent` (empty when each is its garbage, byte for byte, with its origin). */
export function deadLetterProblems(dead: readonly LoggedMessage[], sent: SentPoison): string[] {
  const problems: string[] = [];
  if (dead.length !== sent.poison.length) problems.push(`${dead.length} dead letters from ${sent.topic}, not ${sent.poison.length}`);
  for (const p of sent.poison) {
    const d = dead.find((m) => header(m, 'test-case') === poisonCase(sent.topic, p.kind));
    if (!d) {
      problems.push(`${p.kind}: no dead letter`);
      continue;
    }
    if (!d.value?.equals(p.value)) problems.push(`${p.kind}: the value is not the original's (${d.value?.length ?? 0} bytes, not ${p.value.length})`);
    if (d.key?.toString() !== sent.key) problems.push(`${p.kind}: key ${d.key?.toString()}, not ${sent.key}`);
    if (header(d, TRAWL_HEADERS.originalTopic) !== sent.topic) problems.push(`${p.kind}: origin topic ${header(d, TRAWL_HEADERS.originalTopic)}`);
    if (!/^\d+$/.test(header(d, TRAWL_HEADERS.originalOffset) ?? '')) problems.push(`${p.kind}: origin offset ${header(d, TRAWL_HEADERS.originalOffset)}`);
    if (header(d, TRAWL_HEADERS.deadLetterReason) !== 'undecodable') problems.push(`${p.kind}: reason ${header(d, TRAWL_HEADERS.deadLetterReason)}`);
  }
  return problems;
}

export interface PoisonCheck {
  readonly kafka: Kafka;
  readonly producer: EventProducer;
  readonly app: AppProcess;
  readonly topic: string;
  readonly key: string;
  /** The valid event (encoded for `topic`) that follows the garbage; the garbage is made from it. */
  readonly valid: Buffer;
  readonly deadLetterTopic: string;
  /** What the app does with the valid event, for messages: 'a PageFetched for the fetch'. */
  readonly effect: string;
  /** True once the app has handled the valid event. */
  handled(valid: LogPosition): Promise<boolean>;
  readonly timeoutMs?: number;
}

export interface PoisonOutcome {
  readonly sent: SentPoison;
  /** The dead letters from the topic once the valid event was handled. */
  readonly deadLetters: readonly LoggedMessage[];
  /** Empty when all is right: see deadLetterProblems; and the app must still run. */
  readonly problems: readonly string[];
  /** From the first piece of garbage sent to the valid event seen handled. */
  readonly ms: number;
  /** The figures in a line: `<topic>: 3 dead letters, then <effect>, in <ms> ms`. */
  readonly summary: string;
}

/**
 * The whole check: garbage then the valid event; waits for a dead letter per piece of garbage, then
 * for the valid event's effect; then counts the dead letters again (the valid event was handled,
 * not refused) and looks that the app still runs.
 */
export async function feedPoison(c: PoisonCheck): Promise<PoisonOutcome> {
  const timeoutMs = c.timeoutMs ?? 60_000;
  const started = performance.now();
  const sent = await sendPoison(c.kafka, c.producer, { topic: c.topic, key: c.key, valid: c.valid });
  let dead: LoggedMessage[] = [];
  await waitFor(
    async () => (dead = await deadLettersFrom(c.kafka, c.deadLetterTopic, c.topic)).length >= sent.poison.length,
    { timeoutMs, intervalMs: 500, message: () => `${sent.poison.length} dead letters from ${c.topic} in ${c.deadLetterTopic} (have ${dead.length}); log:\n${c.app.tail()}` },
  );
  await waitFor(() => c.handled(sent.valid), { timeoutMs, intervalMs: 500, message: () => `${c.effect} after the garbage on ${c.topic}; log:\n${c.app.tail()}` });
  const ms = Math.round(performance.now() - started);
  const deadLetters = await deadLettersFrom(c.kafka, c.deadLetterTopic, c.topic);
  const problems = deadLetterProblems(deadLetters, sent);
  if (!c.app.running()) problems.push(`the app is no longer running; log:\n${c.app.tail()}`);
  return { sent, deadLetters, problems, ms, summary: `${c.topic}: ${deadLetters.length} dead letters, then ${c.effect}, in ${ms} ms` };
}

/** A throw-away Postgres database: what `@trawl/store/testing`'s createTestDatabase makes. */
export interface ThrowAwayDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/**
 * One poison test file's world: the whole topic catalogue under a prefix of its own (the child
 * processes' TRAWL_TOPIC_PREFIX), a client, codec and producer on the real Kafka and registry,
 * optionally a throw-away database (the children's DATABASE_URL), and the apps it started, killed
 * at close().
 */
export interface PoisonWorld<D extends ThrowAwayDatabase> {
  /** `poison<hex>.` */
  readonly prefix: string;
  readonly kafka: Kafka;
  readonly codec: EventCodec;
  readonly producer: EventProducer;
  /** The database, once open() made it. */
  readonly db: D;
  /** `<prefix><name>`, e.g. topic('trawl.jobs'). */
  topic(name: string): string;
  /**
   * Creates every topic (as an app would at start-up, but before the producer first asks for
   * leaders), connects the producer and makes the database. Once; startApp calls it.
   */
  open(): Promise<void>;
  /** startApp with TRAWL_TOPIC_PREFIX set to the prefix, and DATABASE_URL to the database's. */
  startApp(app: string, options: StartAppOptions): Promise<AppProcess>;
  /** feedPoison with this world's client and producer. */
  feed(check: Omit<PoisonCheck, 'kafka' | 'producer'>): Promise<PoisonOutcome>;
  /** Kills the apps, disconnects, drops the database, deletes the topics and their registry subjects (best effort). */
  close(): Promise<void>;
}

export function poisonWorld<D extends ThrowAwayDatabase = never>(label: string, options: { readonly database?: () => Promise<D> } = {}): PoisonWorld<D> {
  const prefix = `poison${randomBytes(3).toString('hex')}.`;
  const specs = topicCatalogue(catalogueOptions()).map((spec) => ({ ...spec, name: `${prefix}${spec.name}` }));
  const logger = testLogger(label);
  const kafka = testKafka(label, logger);
  const codec = new EventCodec();
  const producer = new EventProducer({ kafka, logger, codec });
  const apps: AppProcess[] = [];
  let db: D | undefined;
  let opened: Promise<void> | undefined;
  const open = async () => {
    await provisionTopics(kafka, specs);
    await producer.connect();
    if (options.database) db = await options.database();
  };
  return {
    prefix,
    kafka,
    codec,
    producer,
    get db(): D {
      if (!db) throw new Error('the poison world has no database (none asked for, or not open yet)');
      return db;
    },
    topic: (name) => `${prefix}${name}`,
    open: () => (opened ??= open()),
    async startApp(app, startOptions) {
      await (opened ??= open());
      const env = { TRAWL_TOPIC_PREFIX: prefix, ...(db ? { DATABASE_URL: db.url } : {}), ...startOptions.env };
      const started = await startApp(app, { ...startOptions, env });
      apps.push(started);
      return started;
    },
    feed: (check) => feedPoison({ ...check, kafka, producer }),
    async close() {
      for (const app of apps) app.kill();
      await producer.disconnect().catch(() => undefined);
      await db?.drop().catch(() => undefined);
      await deleteTopics(kafka, specs.map((s) => s.name));
      await deleteSubjects(prefix);
    },
  };
}
