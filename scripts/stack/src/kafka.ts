/**
 * Apache Kafka 4 in KRaft mode, one process acting as broker and controller, run from the jars
 * Maven resolved (infra/kafka/pom.xml) with the system Java. Its log is formatted once under
 * TRAWL_HOME/kafka/data; log4j2 (infra/kafka/log4j2.xml) writes TRAWL_HOME/logs/kafka.log.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKafka, endpoints, type Logger } from '@trawl/streams';
import { localEndpoints, stackChoice, userEndpoint, type StackContext } from './context.ts';
import { ExternalEndpointError, PartStartError, PortBusyError, StaleStateError, errorMessage } from './errors.ts';
import { classDataArgs, javaCommand, kafkaClasspath, requireJava } from './java.ts';
import type { PartDown, PartStatus, PartUp } from './part.ts';
import { privateDir } from './private-dirs.ts';
import { tcpOpen, waitFor, withTimeout } from './probe.ts';
import { isAlive, listenerPid, logTail, ownedPid, removePid, run, spawnDetached, stopProcess, treeMemoryMb, writePid } from './process.ts';

const PART = 'kafka';

interface KafkaLayout {
  readonly dir: string;
  readonly properties: string;
  readonly data: string;
  /** What the log was formatted with: a controller port change afterwards would strand the quorum. */
  readonly formatRecord: string;
  readonly log: string;
  readonly stdout: string;
}

function layout(ctx: StackContext): KafkaLayout {
  const dir = join(ctx.home, 'kafka');
  return {
    dir,
    properties: join(dir, 'server.properties'),
    data: join(dir, 'data'),
    formatRecord: join(dir, 'format.json'),
    log: join(ctx.logDir, 'kafka.log'),
    stdout: join(ctx.logDir, 'kafka.stdout.log'),
  };
}

export interface BrokerConfig {
  readonly port: number;
  readonly controllerPort: number;
  readonly dataDir: string;
}

/** server.properties of the single node. */
export function renderServerProperties({ port, controllerPort, dataDir }: BrokerConfig): string {
  const props: Record<string, string | number> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': dataDir,
    // One node: every internal topic must settle for one replica, or it is never created.
    'offsets.topic.replication.factor': 1,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    // Consumers in tests join one at a time; the 3 s default delay would slow every first poll.
    'group.initial.rebalance.delay.ms': 0,
    // Topics come from the catalogue (@trawl/streams provisionTopics), never from a typo.
    'auto.create.topics.enable': 'false',
    'num.partitions': 1,
  };
  return ['# Written by the Trawl local stack at every start; edit scripts/stack/src/kafka.ts instead.', ...Object.entries(props).map(([k, v]) => `${k}=${v}`), ''].join('\n');
}

/**
 * A cluster id as Kafka's `StorageTool random-uuid` makes it: 16 random bytes, base64url without
 * padding, never starting with "-" (the tool would read it as an option). Made here to spare one
 * JVM start on the first `up`.
 */
export function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

export interface ClusterInfo {
  readonly clusterId: string;
  readonly brokers: number;
}

/** Connects an admin client and describes the cluster: the broker's health check. */
export async function describeCluster(brokers: readonly string[], logger: Logger, env: NodeJS.ProcessEnv, timeoutMs = 5_000): Promise<ClusterInfo> {
  const kafka = createKafka({ clientId: 'trawl-stack', logger, endpoints: { ...endpoints(env), kafkaBrokers: brokers } });
  const admin = kafka.admin();
  try {
    const info = await withTimeout(
      admin.connect().then(() => admin.describeCluster()),
      timeoutMs,
      `describeCluster on ${brokers.join(',')}`,
    );
    return { clusterId: info.clusterId, brokers: info.brokers.length };
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

async function healthy(brokers: readonly string[], logger: Logger, env: NodeJS.ProcessEnv): Promise<ClusterInfo | undefined> {
  const first = brokers[0] ?? '';
  const colon = first.lastIndexOf(':');
  const host = first.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
  if (colon <= 0 || !(await tcpOpen(host, Number(first.slice(colon + 1))))) return undefined;
  return describeCluster(brokers, logger, env);
}

async function formatOnce(ctx: StackContext, l: KafkaLayout, classpath: string): Promise<void> {
  const controllerPort = ctx.ports.kafkaController;
  if (existsSync(join(l.data, 'meta.properties'))) {
    let recorded: { controllerPort?: number } = {};
    try {
      recorded = JSON.parse(readFileSync(l.formatRecord, 'utf8')) as { controllerPort?: number };
    } catch {
      // Formatted by hand or by an older stack: trust it.
    }
    if (recorded.controllerPort !== undefined && recorded.controllerPort !== controllerPort) {
      throw new StaleStateError(
        PART,
        `the Kafka log under ${l.data} was formatted with controller port ${recorded.controllerPort}, TRAWL_KAFKA_CONTROLLER_PORT is now ${controllerPort}`,
        `set TRAWL_KAFKA_CONTROLLER_PORT=${recorded.controllerPort} again, or run \`npm run stack -- down\` and delete ${l.dir} to start with an empty log`,
      );
    }
    return;
  }
  const clusterId = newClusterId();
  // A one-shot tool: the C1 compiler alone and the serial collector spend the least CPU on it.
  const jvm = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', ...classDataArgs(ctx.repoRoot, 'kafka')];
  const r = await run(javaCommand(ctx.env), [...jvm, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', l.properties, '--standalone'], {
    cwd: l.dir,
    timeoutMs: 60_000,
  });
  if (r.code !== 0) {
    throw new PartStartError(PART, `formatting the log directory failed (exit ${r.code})`, `delete ${l.data} and run up again`, {
      logTail: r.output.trim().split('\n').slice(-15).join('\n'),
    });
  }
  writeFileSync(l.formatRecord, JSON.stringify({ clusterId, controllerPort }, null, 2) + '\n');
}

function brokerJavaArgs(ctx: StackContext, l: KafkaLayout, classpath: string): string[] {
  return [
    '-Xms256m',
    '-Xmx768m',
    // The flags of Kafka's own kafka-run-class.sh.
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    '-XX:+ExitOnOutOfMemoryError',
    ...classDataArgs(ctx.repoRoot, 'kafka'),
    '-Djava.awt.headless=true',
    `-Dtrawl.log.dir=${ctx.logDir}`,
    `-Dlog4j2.configurationFile=${join(ctx.repoRoot, 'infra', 'kafka', 'log4j2.xml')}`,
    '-cp',
    classpath,
    'kafka.Kafka',
    l.properties,
  ];
}

export async function kafkaUp(ctx: StackContext, logger: Logger): Promise<PartUp> {
  const user = userEndpoint(ctx, 'KAFKA_BROKERS');
  if (user) {
    const brokers = user.split(',').map((b) => b.trim()).filter(Boolean);
    try {
      const info = await describeCluster(brokers, logger, ctx.env, 10_000);
      return { part: PART, action: 'external', endpoint: brokers.join(','), note: `cluster ${info.clusterId}, ${info.brokers} broker(s), from KAFKA_BROKERS`, env: { KAFKA_BROKERS: undefined } };
    } catch (err) {
      throw new ExternalEndpointError(PART, `KAFKA_BROKERS ${user} does not answer: ${errorMessage(err)}`, 'start that cluster or fix KAFKA_BROKERS; unset it to let the stack run a broker');
    }
  }

  const l = layout(ctx);
  const broker = localEndpoints(ctx.ports).KAFKA_BROKERS;
  const env = stackChoice('KAFKA_BROKERS', broker);
  const owned = ownedPid(ctx.runDir, PART, l.properties);
  if (owned) {
    const ok = await waitFor(() => healthy([broker], logger, ctx.env), { timeoutMs: 60_000, alive: () => isAlive(owned) });
    if (!ok.ok) {
      throw new PartStartError(PART, `the broker (pid ${owned}) runs but does not answer on ${broker}`, 'run `npm run stack -- down` then `up` again', { logTail: logTail([l.log, l.stdout]) });
    }
    return { part: PART, action: 'reused', endpoint: broker, pid: owned, note: `cluster ${ok.value.clusterId}`, env };
  }
  if (await tcpOpen('127.0.0.1', ctx.ports.kafka)) {
    const info = await describeCluster([broker], logger, ctx.env).catch(() => undefined);
    if (info) {
      return { part: PART, action: 'external', endpoint: broker, pid: listenerPid(ctx.ports.kafka), note: `cluster ${info.clusterId}, already running, not started by the stack`, env };
    }
    throw new PortBusyError(PART, `port ${ctx.ports.kafka} is taken by something that is not a Kafka broker`, 'stop it, or set TRAWL_KAFKA_PORT to a free port');
  }
  if (await tcpOpen('127.0.0.1', ctx.ports.kafkaController)) {
    throw new PortBusyError(PART, `controller port ${ctx.ports.kafkaController} is taken`, 'stop whatever listens there, or set TRAWL_KAFKA_CONTROLLER_PORT to a free port');
  }

  await requireJava(PART, ctx.env);
  const classpath = kafkaClasspath(ctx.repoRoot);
  privateDir(l.dir);
  mkdirSync(l.data, { recursive: true });
  writeFileSync(l.properties, renderServerProperties({ port: ctx.ports.kafka, controllerPort: ctx.ports.kafkaController, dataDir: l.data }));
  await formatOnce(ctx, l, classpath);

  const pid = spawnDetached({ command: javaCommand(ctx.env), args: brokerJavaArgs(ctx, l, classpath), cwd: l.dir, logFile: l.stdout });
  writePid(ctx.runDir, PART, pid);
  const ok = await waitFor(() => healthy([broker], logger, ctx.env), { timeoutMs: 90_000, intervalMs: 250, alive: () => isAlive(pid) });
  if (!ok.ok) {
    if (ok.reason === 'exited') removePid(ctx.runDir, PART);
    throw new PartStartError(PART, ok.reason === 'exited' ? 'the broker exited during start-up' : `the broker did not answer on ${broker} within 90 s`, `read ${l.log} and ${l.stdout}`, {
      logTail: logTail([l.log, l.stdout]),
    });
  }
  return { part: PART, action: 'started', endpoint: broker, pid, note: `cluster ${ok.value.clusterId}`, env };
}

export async function kafkaStatus(ctx: StackContext, logger: Logger): Promise<PartStatus> {
  const user = userEndpoint(ctx, 'KAFKA_BROKERS');
  const brokers = (user ?? localEndpoints(ctx.ports).KAFKA_BROKERS).split(',').map((b) => b.trim()).filter(Boolean);
  const pid = user ? undefined : ownedPid(ctx.runDir, PART, layout(ctx).properties);
  let info: ClusterInfo | undefined;
  let why: string | undefined;
  try {
    info = await healthy(brokers, logger, ctx.env);
    if (!info) why = 'port closed';
  } catch (err) {
    why = errorMessage(err);
  }
  const shownPid = pid ?? (!user && info ? listenerPid(ctx.ports.kafka) : undefined);
  return {
    part: PART,
    state: info ? 'up' : pid ? 'unhealthy' : 'down',
    ours: pid !== undefined,
    endpoint: brokers.join(','),
    ...(shownPid ? { pid: shownPid, rssMb: treeMemoryMb(shownPid) } : {}),
    note: info ? `cluster ${info.clusterId}${user ? ', from KAFKA_BROKERS' : pid ? '' : ', not started by the stack'}` : why,
  };
}

export async function kafkaDown(ctx: StackContext): Promise<PartDown> {
  const pid = ownedPid(ctx.runDir, PART, layout(ctx).properties);
  if (!pid) return { part: PART, action: (await tcpOpen('127.0.0.1', ctx.ports.kafka)) ? 'not-ours' : 'not-running' };
  // SIGTERM runs the broker's controlled shutdown (flushes, closes the log cleanly).
  const killed = await stopProcess(pid, { signal: 'SIGTERM', graceMs: 30_000 });
  removePid(ctx.runDir, PART);
  return { part: PART, action: 'stopped', pid, killed };
}
