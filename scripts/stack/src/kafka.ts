/**
 * Apache Kafka 4 in KRaft mode, run from the jars Maven resolved (infra/kafka/pom.xml) with the
 * system Java: one process acting as broker and controller, or with `up --brokers N` a cluster of N
 * such processes on their own ports and log directories, every topic in three copies from three
 * nodes on. Each log is formatted once under TRAWL_HOME/kafka; log4j2 (infra/kafka/log4j2.xml) writes
 * TRAWL_HOME/logs/kafka.log (kafka-<n>.log for node n of several).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKafka, endpoints, replicationFor, type Logger } from '@trawl/streams';
import { stackChoice, userEndpoint, type StackContext } from './context.ts';
import { ExternalEndpointError, PartStartError, PortBusyError, StaleStateError, errorMessage } from './errors.ts';
import { classDataArgs, javaCommand, kafkaClasspath, requireJava } from './java.ts';
import type { PartDown, PartStatus, PartUp } from './part.ts';
import { privateDir } from './private-dirs.ts';
import { tcpOpen, waitFor, withTimeout } from './probe.ts';
import { isAlive, listenerPid, logTail, ownedPid, removePid, run, spawnDetached, stopProcess, treeMemoryMb, writePid } from './process.ts';

const PART = 'kafka';

/** One Kafka process: broker and controller in one JVM ("combined" mode). */
export interface KafkaNode {
  /** node.id: 1 to n. */
  readonly id: number;
  readonly port: number;
  readonly controllerPort: number;
  readonly dir: string;
  readonly properties: string;
  readonly data: string;
  /** Its pid file's name under TRAWL_HOME/run, and its log's under TRAWL_HOME/logs. */
  readonly name: string;
  readonly log: string;
  readonly stdout: string;
}

export interface KafkaLayout {
  readonly dir: string;
  /** What the log was formatted with: a controller port or a node count changed afterwards would strand the quorum. */
  readonly formatRecord: string;
  readonly nodes: readonly KafkaNode[];
}

interface FormatRecord {
  readonly clusterId?: string;
  readonly controllerPort?: number;
  /** Absent in a record of one node. */
  readonly nodes?: number;
}

function readRecord(file: string): FormatRecord {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as FormatRecord;
  } catch {
    return {};
  }
}

/**
 * How many nodes the log under TRAWL_HOME/kafka was formatted for: its format record says, a log
 * without one is an older stack's single node; undefined when nothing is formatted yet.
 */
function formattedNodes(dir: string): number | undefined {
  const record = readRecord(join(dir, 'format.json'));
  if (record.nodes !== undefined) return record.nodes;
  if (record.clusterId !== undefined || existsSync(join(dir, 'data', 'meta.properties'))) return 1;
  return undefined;
}

/**
 * Where each node lives and listens. One node keeps the layout of a one-broker stack (kafka/data,
 * run/kafka.pid, logs/kafka.log). Node i of several has kafka/node-<i>/ and run/kafka-<i>.pid, and
 * listens on TRAWL_KAFKA_PORT + 2(i-1) and TRAWL_KAFKA_CONTROLLER_PORT + 2(i-1): with the defaults
 * 9092/9093, 9094/9095, 9096/9097.
 */
export function kafkaLayout(ctx: StackContext, nodes = ctx.kafkaNodes ?? formattedNodes(join(ctx.home, 'kafka')) ?? 1): KafkaLayout {
  const dir = join(ctx.home, 'kafka');
  const list: KafkaNode[] = [];
  for (let id = 1; id <= nodes; id++) {
    const own = nodes === 1 ? dir : join(dir, `node-${id}`);
    const name = nodes === 1 ? PART : `${PART}-${id}`;
    list.push({
      id,
      port: ctx.ports.kafka + 2 * (id - 1),
      controllerPort: ctx.ports.kafkaController + 2 * (id - 1),
      dir: own,
      properties: join(own, 'server.properties'),
      data: join(own, 'data'),
      name,
      log: join(ctx.logDir, `${name}.log`),
      stdout: join(ctx.logDir, `${name}.stdout.log`),
    });
  }
  return { dir, formatRecord: join(dir, 'format.json'), nodes: list };
}

/** The cluster as it was formatted, whatever `--brokers` says: what `status` and `down` look at. */
function formattedLayout(ctx: StackContext): KafkaLayout {
  return kafkaLayout(ctx, formattedNodes(join(ctx.home, 'kafka')) ?? ctx.kafkaNodes ?? 1);
}

/** The brokers' endpoints, comma-separated, as KAFKA_BROKERS names them. */
function endpointOf(l: KafkaLayout): string {
  return l.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
}

/** A log formatted for one number of nodes never runs as another: the quorum and the copies are fixed at format time. */
function checkFormattedNodes(l: KafkaLayout): void {
  const formatted = formattedNodes(l.dir);
  if (formatted !== undefined && formatted !== l.nodes.length) {
    throw new StaleStateError(
      PART,
      `the Kafka log under ${l.dir} was formatted for ${formatted} node(s), \`up\` asks for ${l.nodes.length}`,
      `run \`up${formatted > 1 ? ` --brokers ${formatted}` : ''}\` as before, or use another TRAWL_HOME; or \`npm run stack -- down\` and delete ${l.dir} to start with an empty log`,
    );
  }
}

/** Every port of the cluster distinct and valid, or an error saying which variables to move. */
function checkPorts(l: KafkaLayout): void {
  const ports = l.nodes.flatMap((n) => [n.port, n.controllerPort]);
  const clash = ports.find((p, i) => ports.indexOf(p) !== i);
  const high = ports.find((p) => p > 65535);
  if (clash !== undefined || high !== undefined) {
    throw new PortBusyError(
      PART,
      `${l.nodes.length} Kafka nodes on every second port from TRAWL_KAFKA_PORT and TRAWL_KAFKA_CONTROLLER_PORT ${clash !== undefined ? `would share port ${clash}` : `would go past port 65535`}`,
      'set TRAWL_KAFKA_PORT and TRAWL_KAFKA_CONTROLLER_PORT one apart (as 9092 and 9093), below 65500',
    );
  }
}

export interface BrokerConfig {
  readonly port: number;
  readonly controllerPort: number;
  readonly dataDir: string;
  /** node.id; 1 unless given. */
  readonly nodeId?: number;
  /** Controller ports of every node of a cluster of several, node 1's first; absent for one node. */
  readonly quorum?: readonly number[];
}

/** server.properties of one node: the only one, or one of a cluster when `quorum` names them all. */
export function renderServerProperties({ port, controllerPort, dataDir, nodeId = 1, quorum }: BrokerConfig): string {
  const nodes = quorum?.length ?? 1;
  // The catalogue's own choice (@trawl/streams replicationFor): topics made without it (tests', the
  // internal ones) get the same copies and the same min.insync.replicas.
  const r = replicationFor(nodes);
  const props: Record<string, string | number> = {
    'process.roles': 'broker,controller',
    'node.id': nodeId,
    // One node: a dynamic quorum of itself (format --standalone). Several: a static quorum of all, which
    // each node's log is formatted with alike.
    ...(quorum && quorum.length > 1
      ? { 'controller.quorum.voters': quorum.map((p, i) => `${i + 1}@127.0.0.1:${p}`).join(',') }
      : { 'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}` }),
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT',
    'log.dirs': dataDir,
    // Internal topics get as many copies as the catalogue's topics: with one node, one, or they are never created.
    'offsets.topic.replication.factor': r.factor,
    'transaction.state.log.replication.factor': r.factor,
    'transaction.state.log.min.isr': r.minInsyncReplicas,
    'share.coordinator.state.topic.replication.factor': r.factor,
    'share.coordinator.state.topic.min.isr': r.minInsyncReplicas,
    ...(nodes > 1 ? { 'default.replication.factor': r.factor, 'min.insync.replicas': r.minInsyncReplicas } : {}),
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

/** The cluster as its first broker that accepts a connection describes it; undefined when none does. */
async function healthy(brokers: readonly string[], logger: Logger, env: NodeJS.ProcessEnv): Promise<ClusterInfo | undefined> {
  for (const broker of brokers) {
    const colon = broker.lastIndexOf(':');
    const host = broker.slice(0, colon).replace(/^\[(.*)\]$/, '$1');
    if (colon > 0 && (await tcpOpen(host, Number(broker.slice(colon + 1))))) return describeCluster(brokers, logger, env);
  }
  return undefined;
}

/**
 * The health check of nodes just started or reused: each answers on its own port and counts every
 * node of the cluster registered. Asking any one broker is not enough: after a node is killed the
 * others list it for the controller's session timeout (9 s), restarted or not.
 */
async function allRegistered(probe: readonly KafkaNode[], nodes: number, logger: Logger, env: NodeJS.ProcessEnv): Promise<ClusterInfo | undefined> {
  let info: ClusterInfo | undefined;
  for (const n of probe) {
    if (!(await tcpOpen('127.0.0.1', n.port))) return undefined;
    info = await describeCluster([`127.0.0.1:${n.port}`], logger, env);
    if (info.brokers < nodes) return undefined;
  }
  return info;
}

/** The cluster id a formatted node's meta.properties holds. */
function formattedClusterId(node: KafkaNode): string | undefined {
  try {
    return /^cluster\.id=(.+)$/m.exec(readFileSync(join(node.data, 'meta.properties'), 'utf8'))?.[1]?.trim();
  } catch {
    return undefined;
  }
}

/**
 * Formats the log directory of every node that has none: one node as a quorum of itself
 * (`--standalone`), several with the static quorum their server.properties name, all with one
 * cluster id. Refuses a log formatted for other controller ports.
 */
async function formatOnce(ctx: StackContext, l: KafkaLayout, classpath: string): Promise<void> {
  const controllerPort = ctx.ports.kafkaController;
  const nodes = l.nodes.length;
  const recorded = readRecord(l.formatRecord);
  const done = l.nodes.filter((n) => existsSync(join(n.data, 'meta.properties')));
  if (done.length > 0 && recorded.controllerPort !== undefined && recorded.controllerPort !== controllerPort) {
    throw new StaleStateError(
      PART,
      `the Kafka log under ${l.dir} was formatted with controller port ${recorded.controllerPort}, TRAWL_KAFKA_CONTROLLER_PORT is now ${controllerPort}`,
      `set TRAWL_KAFKA_CONTROLLER_PORT=${recorded.controllerPort} again, or run \`npm run stack -- down\` and delete ${l.dir} to start with an empty log`,
    );
  }
  const todo = l.nodes.filter((n) => !done.includes(n));
  if (todo.length === 0) return;
  // A node whose directory was lost joins the others' cluster (and copies its partitions back from them).
  const clusterId = (done[0] && (formattedClusterId(done[0]) ?? recorded.clusterId)) || newClusterId();
  // A one-shot tool: the C1 compiler alone and the serial collector spend the least CPU on it.
  const jvm = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', ...classDataArgs(ctx.repoRoot, 'kafka')];
  const results = await Promise.all(
    todo.map((n) =>
      run(javaCommand(ctx.env), [...jvm, '-cp', classpath, 'kafka.tools.StorageTool', 'format', '-t', clusterId, '-c', n.properties, ...(nodes === 1 ? ['--standalone'] : [])], {
        cwd: n.dir,
        timeoutMs: 60_000,
      }).then((r) => ({ n, r })),
    ),
  );
  const failed = results.find((x) => x.r.code !== 0);
  if (failed) {
    throw new PartStartError(PART, `formatting the log directory ${failed.n.data} failed (exit ${failed.r.code})`, `delete ${failed.n.data} and run up again`, {
      logTail: failed.r.output.trim().split('\n').slice(-15).join('\n'),
    });
  }
  writeFileSync(l.formatRecord, JSON.stringify({ clusterId, controllerPort, ...(nodes > 1 ? { nodes } : {}) }, null, 2) + '\n');
}

function brokerJavaArgs(ctx: StackContext, node: KafkaNode, nodes: number, classpath: string): string[] {
  return [
    // Several nodes share one machine: a smaller ceiling each.
    '-Xms256m',
    nodes > 1 ? '-Xmx512m' : '-Xmx768m',
    // The flags of Kafka's own kafka-run-class.sh.
    '-XX:+UseG1GC',
    '-XX:MaxGCPauseMillis=20',
    '-XX:InitiatingHeapOccupancyPercent=35',
    '-XX:+ExplicitGCInvokesConcurrent',
    '-XX:+ExitOnOutOfMemoryError',
    ...classDataArgs(ctx.repoRoot, 'kafka'),
    '-Djava.awt.headless=true',
    `-Dtrawl.log.dir=${ctx.logDir}`,
    `-Dtrawl.log.name=${node.name}`,
    `-Dlog4j2.configurationFile=${join(ctx.repoRoot, 'infra', 'kafka', 'log4j2.xml')}`,
    '-cp',
    classpath,
    'kafka.Kafka',
    node.properties,
  ];
}

/** The pid of each node the stack started and that still runs, by node id. */
function ownedNodes(ctx: StackContext, l: KafkaLayout): Map<number, number> {
  const out = new Map<number, number>();
  for (const n of l.nodes) {
    const pid = ownedPid(ctx.runDir, n.name, n.properties);
    if (pid) out.set(n.id, pid);
  }
  return out;
}

/** Each node's ports and, while it runs, the pid the stack started it as: for fault tests that kill one. */
export function kafkaNodes(ctx: StackContext): (KafkaNode & { readonly pid: number | undefined })[] {
  const l = formattedLayout(ctx);
  const owned = ownedNodes(ctx, l);
  return l.nodes.map((n) => ({ ...n, pid: owned.get(n.id) }));
}

function logsOf(l: KafkaLayout): string[] {
  return l.nodes.flatMap((n) => [n.log, n.stdout]);
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

  const l = kafkaLayout(ctx);
  const nodes = l.nodes.length;
  checkFormattedNodes(l);
  checkPorts(l);
  const endpoint = endpointOf(l);
  const brokers = endpoint.split(',');
  const env = stackChoice('KAFKA_BROKERS', endpoint);
  const sizeNote = nodes > 1 ? `, ${nodes} brokers` : '';
  const owned = ownedNodes(ctx, l);
  if (owned.size === nodes) {
    const pids = [...owned.values()];
    const ok = await waitFor(() => allRegistered(l.nodes, nodes, logger, ctx.env), { timeoutMs: 60_000, alive: () => pids.every(isAlive) });
    if (!ok.ok) {
      throw new PartStartError(PART, `the broker(s) (pid ${pids.join(', ')}) run but ${nodes > 1 ? `not all ${nodes} register` : 'do not answer'} on ${endpoint}`, 'run `npm run stack -- down` then `up` again', {
        logTail: logTail(logsOf(l)),
      });
    }
    return { part: PART, action: 'reused', endpoint, pid: pids[0]!, note: `cluster ${ok.value.clusterId}${sizeNote}`, env };
  }
  if (nodes === 1 && (await tcpOpen('127.0.0.1', ctx.ports.kafka))) {
    const info = await describeCluster(brokers, logger, ctx.env).catch(() => undefined);
    if (info) {
      return { part: PART, action: 'external', endpoint, pid: listenerPid(ctx.ports.kafka), note: `cluster ${info.clusterId}, already running, not started by the stack`, env };
    }
    throw new PortBusyError(PART, `port ${ctx.ports.kafka} is taken by something that is not a Kafka broker`, 'stop it, or set TRAWL_KAFKA_PORT to a free port');
  }
  const missing = l.nodes.filter((n) => !owned.has(n.id));
  for (const n of missing) {
    // A node of a cluster cannot be someone else's: every port it needs must be free.
    if (await tcpOpen('127.0.0.1', n.port)) {
      throw new PortBusyError(PART, `port ${n.port} (node ${n.id} of ${nodes}) is taken by a process the stack did not start`, 'stop it, or move the cluster with TRAWL_KAFKA_PORT (brokers take every second port from it)');
    }
    if (await tcpOpen('127.0.0.1', n.controllerPort)) {
      throw new PortBusyError(PART, `controller port ${n.controllerPort}${nodes > 1 ? ` (node ${n.id} of ${nodes})` : ''} is taken`, 'stop whatever listens there, or set TRAWL_KAFKA_CONTROLLER_PORT to a free port');
    }
  }

  await requireJava(PART, ctx.env);
  const classpath = kafkaClasspath(ctx.repoRoot);
  privateDir(l.dir);
  const quorum = nodes > 1 ? l.nodes.map((n) => n.controllerPort) : undefined;
  for (const n of l.nodes) {
    privateDir(n.dir);
    privateDir(n.data);
    writeFileSync(n.properties, renderServerProperties({ port: n.port, controllerPort: n.controllerPort, dataDir: n.data, nodeId: n.id, ...(quorum ? { quorum } : {}) }));
  }
  await formatOnce(ctx, l, classpath);

  const started = missing.map((n) => {
    const pid = spawnDetached({ command: javaCommand(ctx.env), args: brokerJavaArgs(ctx, n, nodes, classpath), cwd: n.dir, logFile: n.stdout });
    writePid(ctx.runDir, n.name, pid);
    return { n, pid };
  });
  const ok = await waitFor(() => allRegistered(missing, nodes, logger, ctx.env), { timeoutMs: 90_000, intervalMs: 250, alive: () => started.every((s) => isAlive(s.pid)) });
  if (!ok.ok) {
    const dead = started.filter((s) => !isAlive(s.pid));
    for (const s of dead) removePid(ctx.runDir, s.n.name);
    const what = nodes > 1 ? `${nodes} brokers` : 'the broker';
    throw new PartStartError(
      PART,
      ok.reason === 'exited' ? `${dead.map((s) => (nodes > 1 ? `node ${s.n.id}` : 'the broker')).join(', ')} exited during start-up` : `${what} did not ${nodes > 1 ? 'all register' : 'answer'} on ${endpoint} within 90 s`,
      `read ${[...new Set(missing.flatMap((n) => [n.log, n.stdout]))].join(' and ')}`,
      { logTail: logTail(missing.flatMap((n) => [n.log, n.stdout])) },
    );
  }
  const which = nodes > 1 && missing.length < nodes ? `, node ${missing.map((n) => n.id).join(', ')} of ${nodes}` : sizeNote;
  return { part: PART, action: 'started', endpoint, pid: started[0]!.pid, note: `cluster ${ok.value.clusterId}${which}`, env };
}

export async function kafkaStatus(ctx: StackContext, logger: Logger): Promise<PartStatus> {
  const user = userEndpoint(ctx, 'KAFKA_BROKERS');
  const l = formattedLayout(ctx);
  const nodes = user ? 1 : l.nodes.length;
  const brokers = (user ?? endpointOf(l)).split(',').map((b) => b.trim()).filter(Boolean);
  const pids = user ? [] : [...ownedNodes(ctx, l).values()];
  let info: ClusterInfo | undefined;
  let why: string | undefined;
  try {
    info = await healthy(brokers, logger, ctx.env);
    if (!info) why = 'port closed';
  } catch (err) {
    why = errorMessage(err);
  }
  const shownPid = pids[0] ?? (!user && info ? listenerPid(ctx.ports.kafka) : undefined);
  // A node of the stack's that is gone counts before the controller notices (its session timeout).
  const complete = info !== undefined && info.brokers >= nodes && (pids.length === 0 || pids.length === nodes);
  const rssMb = pids.length > 1 ? pids.reduce((sum, pid) => sum + treeMemoryMb(pid), 0) : shownPid ? treeMemoryMb(shownPid) : undefined;
  const size = nodes > 1 ? `, ${info?.brokers ?? 0}/${nodes} brokers, ${pids.length} running` : '';
  return {
    part: PART,
    state: complete ? 'up' : info || pids.length > 0 ? 'unhealthy' : 'down',
    ours: pids.length > 0,
    endpoint: brokers.join(','),
    ...(shownPid ? { pid: shownPid } : {}),
    ...(rssMb !== undefined ? { rssMb } : {}),
    note: info ? `cluster ${info.clusterId}${size}${user ? ', from KAFKA_BROKERS' : pids.length ? '' : ', not started by the stack'}` : why,
  };
}

export async function kafkaDown(ctx: StackContext): Promise<PartDown> {
  const l = formattedLayout(ctx);
  const owned = ownedNodes(ctx, l);
  if (owned.size === 0) return { part: PART, action: (await tcpOpen('127.0.0.1', ctx.ports.kafka)) ? 'not-ours' : 'not-running' };
  // SIGTERM runs each broker's controlled shutdown (flushes, closes the log cleanly). All nodes of a
  // cluster at once: stopped one by one, the last ones would wait for a quorum that is gone.
  const stopped = await Promise.all(
    l.nodes
      .filter((n) => owned.has(n.id))
      .map(async (n) => {
        const pid = owned.get(n.id)!;
        const killed = await stopProcess(pid, { signal: 'SIGTERM', graceMs: 30_000 });
        removePid(ctx.runDir, n.name);
        return { pid, killed };
      }),
  );
  return { part: PART, action: 'stopped', pid: stopped[0]!.pid, killed: stopped.some((s) => s.killed) };
}
