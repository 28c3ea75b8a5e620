/**
 * A whole Trawl pipeline for one test: its own topics (TRAWL_TOPIC_PREFIX), its own database, and
 * every service as a real child process that a test can SIGKILL and restart. Nothing is mocked:
 * the children talk to the same Kafka, registry and Postgres as production would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  catalogueOptions,
  createKafka,
  endpoints,
  createLogger,
  httpTarget,
  EventCodec,
  EventProducer,
  readEvents,
  repoRoot,
  topicCatalogue,
  trawlHome,
  provisionTopics,
  operatorPortVariable,
  type LoggedEvent,
} from '@trawl/streams';
import { compileApp, compiledServiceEnv } from '@trawl/streams/build';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import type { Kafka } from 'kafkajs';

export const APP_NAMES = ['frontier', 'worker', 'dispatcher', 'projector-pg', 'projector-ch', 'api', 'webhooks'] as const;
export type AppName = (typeof APP_NAMES)[number];

export interface PipelineOptions {
  /** Extra environment for every child (e.g. TRAWL_FETCH_RETRY_DELAYS_MS). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Apps whose children run under `node --cpu-prof` (a profile per process, written when it exits
   * gracefully: see stop()). Default: the comma list in TRAWL_CPU_PROF (e.g. "frontier,worker").
   */
  readonly cpuProfile?: readonly AppName[];
  /** Where the profiles go. Default TRAWL_CPU_PROF_DIR, else `.trawl/profiles/<prefix>`. */
  readonly cpuProfileDir?: string;
}

export interface Child {
  readonly app: AppName;
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  /** Its operator port (`/metrics`, `/healthz`, `/readyz`); null for a child started without one. */
  readonly operatorUrl: string | null;
  /** Where its stdout and stderr go. */
  readonly logFile: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const OPERATOR_PORT_FIRST = 20_000;
const OPERATOR_PORT_END = 32_768;

export class Pipeline {
  readonly children: Child[] = [];
  readonly logger = createLogger('e2e');

  private constructor(
    readonly prefix: string,
    readonly db: TestDatabase,
    readonly env: Readonly<Record<string, string>>,
    readonly kafka: Kafka,
    readonly codec: EventCodec,
    readonly producer: EventProducer,
    readonly topics: ReturnType<typeof prefixedTopics>,
    readonly profiling: { readonly apps: ReadonlySet<AppName>; readonly dir: string },
    /** Each app's compiled main module (compileApp: services run compiled, as `trawl up` runs them). */
    private readonly mains: Readonly<Record<AppName, string>>,
  ) {}

  static async start(options: PipelineOptions = {}): Promise<Pipeline> {
    const prefix = `e2e${randomBytes(3).toString('hex')}.`;
    const compiled = await Promise.all(APP_NAMES.map(async (app) => [app, (await compileApp(app)).main] as const));
    const db = await createTestDatabase();
    const env = {
      ...options.env,
      TRAWL_TOPIC_PREFIX: prefix,
      DATABASE_URL: db.url,
      // Test sites listen on ports not known yet (and the API on one from freePort()), so the default
      // opens loopback whole, the stack's ports included: said explicitly, since the services refuse
      // such a list otherwise (TRAWL_FETCH_ALLOW_STACK). A test that names its own list gets the check.
      TRAWL_FETCH_ALLOW: options.env?.TRAWL_FETCH_ALLOW ?? '127.0.0.0/8,::1/128',
      ...(options.env?.TRAWL_FETCH_ALLOW === undefined ? { TRAWL_FETCH_ALLOW_STACK: options.env?.TRAWL_FETCH_ALLOW_STACK ?? '1' } : {}),
      TRAWL_EVENT_PARTITIONS: options.env?.TRAWL_EVENT_PARTITIONS ?? '3',
      TRAWL_FETCH_PARTITIONS: options.env?.TRAWL_FETCH_PARTITIONS ?? '4',
      // projector-ch of this pipeline writes its own ClickHouse database (dropped by stop()).
      CLICKHOUSE_DATABASE: options.env?.CLICKHOUSE_DATABASE ?? `trawl_${prefix.replace(/\.$/, '')}`,
    };
    const logger = createLogger('e2e');
    const kafka = createKafka({ clientId: 'e2e', logger });
    const topics = prefixedTopics(prefix, env);
    await provisionTopics(kafka, topics.specs);
    const codec = new EventCodec();
    const producer = new EventProducer({ kafka, logger, codec });
    await producer.connect();
    const profiled = options.cpuProfile ?? ((process.env.TRAWL_CPU_PROF ?? '').split(',').map((a) => a.trim()).filter(Boolean) as AppName[]);
    const profileDir = options.cpuProfileDir ?? process.env.TRAWL_CPU_PROF_DIR ?? join(trawlHome(), 'profiles', prefix.replace(/\.$/, ''));
    return new Pipeline(prefix, db, env, kafka, codec, producer, topics, { apps: new Set(profiled), dir: profileDir }, Object.fromEntries(compiled) as Record<AppName, string>);
  }

  /**
   * Ports for the children's operator ports: a run of this pipeline's own from a random start, so
   * pipelines side by side on one host rarely meet (a child whose port is taken fails to start).
   * The run stays below 32768, where Linux's ephemeral range begins: the many outgoing connections
   * of a test run (Kafka, Postgres, HTTP) never hold one of these ports.
   */
  private nextOperatorPort = OPERATOR_PORT_FIRST + (randomBytes(2).readUInt16BE(0) % (OPERATOR_PORT_END - OPERATOR_PORT_FIRST - 100));

  /**
   * Starts one service process, with its operator port (`child.operatorUrl`). `options.prefix` is a
   * command that execs the service in its place (`ip netns exec <ns>`: the pid stays the service's).
   */
  spawn(app: AppName, extraEnv: Readonly<Record<string, string>> = {}, options: { readonly prefix?: readonly string[] } = {}): Child {
    const operatorPort = this.nextOperatorPort++;
    const logDir = join(trawlHome(), 'logs', 'e2e');
    mkdirSync(logDir, { recursive: true });
    const logFile = join(logDir, `${this.prefix}${app}-${this.children.length}.log`);
    const log = createWriteStream(logFile);
    const nodeArgs: string[] = [];
    if (this.profiling.apps.has(app)) {
      // One folder per child: Node writes a profile per thread (the worker's parse threads too),
      // named CPU.<date>.<time>.<pid>.<tid>.<seq>.cpuprofile; the main thread's tid is 0. Private,
      // as everything under TRAWL_HOME is.
      const dir = join(this.profiling.dir, `${app}-${this.children.length}`);
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${dir}`);
    }
    const [command, ...args] = [...(options.prefix ?? []), process.execPath, ...nodeArgs, this.mains[app]];
    const proc = spawn(command!, args, {
      cwd: repoRoot,
      env: { ...process.env, ...compiledServiceEnv(), TRAWL_LOG_LEVEL: 'info', ...this.env, [operatorPortVariable(app)]: String(operatorPort), ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    proc.stdout!.pipe(log);
    proc.stderr!.pipe(log);
    const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
    const child = { app, process: proc, exited, operatorUrl: `http://127.0.0.1:${operatorPort}`, logFile };
    this.children.push(child);
    return child;
  }

  /**
   * Throws when a child this test did not kill has exited with an error, with the end of its log:
   * a wait on something the child should make then fails at once, saying why.
   */
  checkChildren(): void {
    for (const c of this.children) {
      if (c.process.exitCode !== null && c.process.exitCode !== 0 && !c.process.killed) {
        const tail = existsSync(c.logFile) ? readFileSync(c.logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n') : '(no log)';
        throw new Error(`${c.app} exited with code ${c.process.exitCode}; the end of ${c.logFile}:\n${tail}`);
      }
    }
  }

  /** SIGKILL: no goodbye, no commit, no flush. */
  async kill(child: Child): Promise<void> {
    child.process.kill('SIGKILL');
    await child.exited;
  }

  /** SIGTERM and wait for the graceful stop (SIGKILL after `timeoutMs`): lets --cpu-prof write its profile. */
  async terminate(child: Child, timeoutMs = 30_000): Promise<void> {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return;
    child.process.kill('SIGTERM');
    const timer = setTimeout(() => child.process.kill('SIGKILL'), timeoutMs);
    await child.exited;
    clearTimeout(timer);
  }

  /**
   * A new API key for `user` in this pipeline's database, minted by the real CLI
   * (`trawl keys create`) as an operator would: a process, so nothing here depends on apps/services/api.
   */
  async createKey(user: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const p = spawn(process.execPath, [join(repoRoot, 'apps', 'tools', 'cli', 'bin', 'trawl.js'), 'keys', 'create', user], {
        cwd: repoRoot,
        env: { ...process.env, ...this.env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      p.on('error', reject);
      p.on('exit', (code) => (code === 0 ? resolve(stdout.trim()) : reject(new Error(`trawl keys create ${user}: ${stderr}`))));
    });
  }

  /**
   * Every event on the pipeline's event topics. Right after the topics are made (or the broker
   * restarted) a partition may have no leader yet, which kafkajs reports as a retriable error
   * ("not the leader for that topic-partition"): those are waited out, anything else is thrown.
   */
  async events(timeoutMs = 60_000): Promise<LoggedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await readEvents(this.kafka, this.codec, this.topics.events);
      } catch (err) {
        if ((err as { retriable?: boolean }).retriable !== true || Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
  }

  /**
   * Waits until the consumer group `name` (without the pipeline's prefix, e.g. `trawl-worker`) is
   * settled with `members` members. A member joining mid-crawl moves partitions, and the new owner
   * redoes what the old one had not committed: tests that count repeats start once it has settled.
   */
  async groupSettled(name: string, members: number, timeoutMs = 120_000): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const { groups } = await admin.describeGroups([`${this.prefix}${name}`]);
        if (groups[0]?.state === 'Stable' && groups[0].members.length === members) return;
        if (Date.now() > deadline) throw new Error(`group ${name} never settled with ${members} members: ${JSON.stringify(groups[0]?.state)}, ${groups[0]?.members.length ?? 0} members`);
        await sleep(250);
      }
    } finally {
      await admin.disconnect();
    }
  }

  /** Polls the pipeline's event topics until `done(events)` holds. */
  async waitFor(done: (events: LoggedEvent[]) => boolean, timeoutMs: number, what = 'condition'): Promise<LoggedEvent[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const events = await this.events();
      if (done(events)) return events;
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      this.checkChildren();
      await sleep(500);
    }
  }

  async stop(): Promise<void> {
    // Profiled children stop gracefully (a killed process writes no profile); the rest are killed.
    await Promise.all(this.children.filter((c) => this.profiling.apps.has(c.app)).map((c) => this.terminate(c)));
    for (const c of this.children) if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await Promise.all(this.children.map((c) => c.exited));
    await this.producer.disconnect();
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.deleteTopics({ topics: this.topics.specs.map((s) => s.name) });
    } catch (err) {
      this.logger.warn({ err }, 'could not delete the pipeline topics');
    } finally {
      await admin.disconnect();
    }
    await this.db.drop();
    await this.dropClickHouseDatabase();
  }

  /** Best effort: the pipeline's own ClickHouse database, when projector-ch created it. */
  private async dropClickHouseDatabase(): Promise<void> {
    const database = this.env.CLICKHOUSE_DATABASE!;
    if (!/^trawl_e2e[0-9a-f]+$/.test(database)) return;
    const body = `DROP DATABASE IF EXISTS ${database}`;
    const ch = httpTarget(endpoints().clickhouseUrl);
    await fetch(ch.url, { method: 'POST', body, headers: ch.authorization ? { authorization: ch.authorization } : {}, signal: AbortSignal.timeout(10_000) }).catch(() => undefined);
  }
}

/** The catalogue as the children will see it with the prefix and partition settings. */
function prefixedTopics(prefix: string, env: Readonly<Record<string, string>>) {
  const specs = topicCatalogue(catalogueOptions({ ...process.env, ...env })).map((s) => ({ ...s, name: `${prefix}${s.name}` }));
  const name = (n: string) => `${prefix}${n}`;
  return {
    specs,
    jobs: name('trawl.jobs'),
    pages: name('trawl.pages'),
    items: name('trawl.items'),
    fetch: name('trawl.fetch'),
    fetchDlq: name('trawl.fetch.dlq'),
    schedule: name('trawl.schedule'),
    sessions: name('trawl.sessions'),
    events: [name('trawl.jobs'), name('trawl.pages'), name('trawl.items')],
  };
}
