/**
 * The soak's own stack: `stack up` in a TRAWL_HOME of its own with every part on ports nobody else
 * uses, so that killing a broker or restarting Postgres never touches the shared stack other
 * engineers run on the default ports. The endpoint variables of the invoking shell are blanked:
 * were one inherited (KAFKA_BROKERS of the shared broker), `up` would use it as an external part
 * and the nemesis would then fault the shared stack.
 */
import { chmodSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, formatUpStep, kafkaNodes, stackDown, stackUp, type KafkaNode, type StackContext, type UpStep } from '@trawl/stack';

/** Whether the port can be bound on the loopback now. */
function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer().once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * `n` ports in a row, free now, from a random start below Linux's ephemeral range (32768 on): a
 * port chosen there could be taken by an outgoing connection before its part binds it.
 */
async function freeRun(n: number, taken: ReadonlySet<number>): Promise<number> {
  for (let i = 0; i < 100; i++) {
    const base = 20_000 + Math.floor(Math.random() * (12_000 - n));
    const ports = Array.from({ length: n }, (_, d) => base + d);
    if (ports.some((p) => taken.has(p))) continue;
    if ((await Promise.all(ports.map(bindable))).every(Boolean)) return base;
  }
  throw new Error(`no ${n} free ports in a row below 32768`);
}

export interface OwnStack {
  readonly home: string;
  /** The environment of every part, client and service of the soak (TRAWL_HOME, ports, blanked endpoints). */
  readonly env: NodeJS.ProcessEnv;
  readonly brokers: number;
  readonly ports: Readonly<Record<string, number>>;
  context(): StackContext;
  /** `stack up` again: restarts whatever part is gone (idempotent). Throws with the failed parts' reasons. */
  up(onStep?: (s: UpStep) => void): Promise<void>;
  /** Kafka nodes with the pid each runs as now (undefined while it is down). */
  nodes(): (KafkaNode & { readonly pid: number | undefined })[];
  down(): Promise<void>;
}

/** Every endpoint variable a shell may carry from the shared stack: blanked, so `up` picks its own. */
const ENDPOINT_VARIABLES = ['KAFKA_BROKERS', 'SCHEMA_REGISTRY_URL', 'DATABASE_URL', 'CLICKHOUSE_URL', 'CLICKHOUSE_READ_URL', 'CLICKHOUSE_DATABASE', 'TRAWL_S3_URL', 'TRAWL_TOPIC_PREFIX'] as const;

export async function startOwnStack(opts: { brokers: number; home?: string; onStep?: (s: UpStep) => void }): Promise<OwnStack> {
  const home = opts.home ?? mkdtempSync(join(tmpdir(), 'trawl-soak-'));
  // As root the private Postgres cluster runs as `postgres`, which must pass through this directory.
  chmodSync(home, 0o711);
  const taken = new Set<number>();
  const run = async (n: number) => {
    const base = await freeRun(n, taken);
    for (let d = 0; d < n; d++) taken.add(base + d);
    return base;
  };
  const kafka = await run(2 * opts.brokers);
  const ports = {
    kafka,
    kafkaController: kafka + 1,
    postgres: await run(1),
    registry: await run(1),
    clickhouseHttp: await run(1),
    clickhouseTcp: await run(1),
    s3: await run(1),
  };
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(ENDPOINT_VARIABLES.map((v) => [v, ''])),
    TRAWL_HOME: home,
    TRAWL_KAFKA_NODES: String(opts.brokers),
    TRAWL_KAFKA_PORT: String(ports.kafka),
    TRAWL_KAFKA_CONTROLLER_PORT: String(ports.kafkaController),
    TRAWL_POSTGRES_PRIVATE: '1',
    TRAWL_POSTGRES_PORT: String(ports.postgres),
    TRAWL_REGISTRY_PORT: String(ports.registry),
    TRAWL_CLICKHOUSE_HTTP_PORT: String(ports.clickhouseHttp),
    TRAWL_CLICKHOUSE_TCP_PORT: String(ports.clickhouseTcp),
    TRAWL_S3_PORT: String(ports.s3),
  };
  const stack: OwnStack = {
    home,
    env,
    brokers: opts.brokers,
    ports,
    context: () => createContext(env),
    async up(onStep) {
      const report = await stackUp({ env, brokers: opts.brokers, ...(onStep ? { onStep } : {}) });
      const failed = report.steps.filter((s): s is UpStep & { ok: false } => !s.ok);
      if (failed.length > 0) throw new Error(failed.map((s) => formatUpStep(s)).join('\n'));
    },
    nodes: () => kafkaNodes(createContext(env)),
    async down() {
      await stackDown({ env });
    },
  };
  await stack.up(opts.onStep);
  return stack;
}
