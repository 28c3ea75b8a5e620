/**
 * What a Trawl deployment must be, beyond what the schemas accept: every service of
 * apps/services/ runs as a Deployment whose container is probed on the operator port it opens
 * (/healthz for liveness, /readyz for readiness), asks for and is bounded in CPU and memory, runs
 * as a non-root user with no privilege to gain, no capability, a read-only root file system and a
 * seccomp profile, and has a PodDisruptionBudget; the workers have an autoscaler on an outside
 * metric bounded by trawl.fetch's partitions; the Kafka topics are the catalogue's, replicated
 * three times and written to two. Each rule names the resource it fails, so the lint says where.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { catalogueOptions, operatorPortFromEnv, TOPIC_PREFIX, topicCatalogue } from '@trawl/streams';
import { REPO_ROOT } from '../import-layers.js';
import { TOPIC_MIN_INSYNC_REPLICAS, TOPIC_REPLICAS } from './kafka-topics.ts';
import type { Resource } from './kustomize.ts';

/** The deployable services: apps/services/<name> with a src/main.ts (what `trawl up` runs). */
export function serviceNames(root: string = REPO_ROOT): string[] {
  const dir = join(root, 'apps', 'services');
  return readdirSync(dir)
    .filter((name) => existsSync(join(dir, name, 'src', 'main.ts')))
    .sort();
}

interface Probe {
  httpGet?: { path?: string; port?: string | number };
}
interface Container {
  name: string;
  args?: string[];
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: SecurityContext;
}
interface SecurityContext {
  runAsNonRoot?: boolean;
  runAsUser?: number;
  allowPrivilegeEscalation?: boolean;
  readOnlyRootFilesystem?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
  seccompProfile?: { type?: string };
}
interface PodSpec {
  securityContext?: SecurityContext;
  containers?: Container[];
}

const spec = <T>(r: Resource): T => (r.spec ?? {}) as T;
const named = (rs: readonly Resource[], kind: string, name: string) => rs.find((r) => r.kind === kind && r.metadata.name === name);

/** `500m` → 0.5, `2` → 2; `768Mi` → bytes. Enough of Kubernetes' quantities to compare requests with limits. */
export function quantity(q: string | number): number {
  if (typeof q === 'number') return q;
  const m = /^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q);
  if (!m) return Number.NaN;
  const scale: Record<string, number> = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40 };
  return Number(m[1]) * (m[2] ? scale[m[2]]! : 1);
}

function configEnv(resources: readonly Resource[], c: Container): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    const cm = from.configMapRef && named(resources, 'ConfigMap', from.configMapRef.name);
    Object.assign(env, (cm?.data as Record<string, string> | undefined) ?? {});
  }
  for (const e of c.env ?? []) if (e.value !== undefined) env[e.name] = e.value;
  return env;
}

function checkContainer(resources: readonly Resource[], where: string, service: string, c: Container, pod: PodSpec): string[] {
  const errors: string[] = [];
  const env = configEnv(resources, c);
  const port = operatorPortFromEnv(service, env);
  const operator = c.ports?.find((p) => p.containerPort === port);
  if (port === undefined) errors.push(`${where}: the service opens no operator port (its METRICS_PORT is 0)`);
  else if (!operator) errors.push(`${where}: declares no containerPort ${port}, the operator port the service opens`);
  const probeTarget = (name: 'livenessProbe' | 'readinessProbe', path: string) => {
    const get = c[name]?.httpGet;
    if (!get) return errors.push(`${where}: no ${name} (an HTTP GET of ${path} on the operator port)`);
    if (get.path !== path) errors.push(`${where}: ${name} asks ${get.path ?? '/'}, not ${path}`);
    const probed = typeof get.port === 'number' ? get.port : c.ports?.find((p) => p.name === get.port)?.containerPort;
    if (port !== undefined && probed !== port) errors.push(`${where}: ${name} probes port ${String(get.port)}, not the operator port ${port}`);
  };
  probeTarget('livenessProbe', '/healthz');
  probeTarget('readinessProbe', '/readyz');
  if (!c.args?.some((a) => a === `.trawl/build/${service}/main.mjs`)) errors.push(`${where}: does not run .trawl/build/${service}/main.mjs`);
  for (const r of ['cpu', 'memory']) {
    const request = c.resources?.requests?.[r];
    const limit = c.resources?.limits?.[r];
    if (request === undefined) errors.push(`${where}: no ${r} request`);
    if (limit === undefined) errors.push(`${where}: no ${r} limit`);
    if (request !== undefined && limit !== undefined && !(quantity(request) <= quantity(limit))) errors.push(`${where}: ${r} request ${request} above its limit ${limit}`);
  }
  const sc = { ...pod.securityContext, ...c.securityContext };
  if (sc.runAsNonRoot !== true) errors.push(`${where}: runAsNonRoot is not true`);
  if (sc.runAsUser === undefined || sc.runAsUser === 0) errors.push(`${where}: no non-root runAsUser`);
  if (c.securityContext?.allowPrivilegeEscalation !== false) errors.push(`${where}: allowPrivilegeEscalation is not false`);
  if (c.securityContext?.readOnlyRootFilesystem !== true) errors.push(`${where}: the root file system is writable`);
  if (!c.securityContext?.capabilities?.drop?.includes('ALL')) errors.push(`${where}: capabilities are not dropped (drop: [ALL])`);
  if ((c.securityContext?.capabilities?.add ?? []).length > 0) errors.push(`${where}: adds capabilities`);
  if (!['RuntimeDefault', 'Localhost'].includes(sc.seccompProfile?.type ?? '')) errors.push(`${where}: no seccomp profile (RuntimeDefault or Localhost)`);
  return errors;
}

function selects(selector: { matchLabels?: Record<string, string> } | undefined, labels: Record<string, string> | undefined): boolean {
  const wanted = Object.entries(selector?.matchLabels ?? {});
  return wanted.length > 0 && wanted.every(([k, v]) => labels?.[k] === v);
}

/** Every rule broken by the rendered `resources` of one kustomization; empty when none. */
export function checkPolicy(resources: readonly Resource[], services: readonly string[] = serviceNames()): string[] {
  const errors: string[] = [];
  for (const service of services) {
    const name = `trawl-${service}`;
    const deployment = named(resources, 'Deployment', name);
    if (!deployment) {
      errors.push(`Deployment ${name}: missing (every service of apps/services/ is deployed)`);
      continue;
    }
    const template = spec<{ template?: { metadata?: { labels?: Record<string, string> }; spec?: PodSpec } }>(deployment).template;
    const pod = template?.spec ?? {};
    const container = pod.containers?.find((c) => c.name === service);
    if (!container) errors.push(`Deployment ${name}: no container named ${service}`);
    for (const c of pod.containers ?? []) errors.push(...checkContainer(resources, `Deployment ${name}, container ${c.name}`, service, c, pod));
    const pdb = resources.find((r) => r.kind === 'PodDisruptionBudget' && selects(spec<{ selector?: { matchLabels?: Record<string, string> } }>(r).selector, template?.metadata?.labels));
    if (!pdb) errors.push(`Deployment ${name}: no PodDisruptionBudget selects its pods`);
  }

  const hpa = resources.find((r) => r.kind === 'HorizontalPodAutoscaler' && spec<{ scaleTargetRef?: { kind?: string; name?: string } }>(r).scaleTargetRef?.name === 'trawl-worker');
  const env = (named(resources, 'ConfigMap', 'trawl-config')?.data ?? {}) as Record<string, string>;
  const options = catalogueOptions(env);
  if (!hpa) errors.push('HorizontalPodAutoscaler for Deployment trawl-worker: missing');
  else {
    const h = spec<{ minReplicas?: number; maxReplicas: number; metrics?: { type: string }[] }>(hpa);
    if (!h.metrics?.some((m) => m.type === 'External' || m.type === 'Object' || m.type === 'Pods')) errors.push(`HorizontalPodAutoscaler ${hpa.metadata.name}: scales on no consumer-lag metric (External, Object or Pods)`);
    if (h.maxReplicas > options.fetchPartitions) errors.push(`HorizontalPodAutoscaler ${hpa.metadata.name}: maxReplicas ${h.maxReplicas} above trawl.fetch's ${options.fetchPartitions} partitions (workers past them idle)`);
  }

  const topics = resources.filter((r) => r.kind === 'KafkaTopic');
  const expected = topicCatalogue(options).map((s) => ({ ...s, name: s.name.slice(TOPIC_PREFIX.length) }));
  for (const want of expected) {
    const t = topics.find((r) => spec<{ topicName?: string }>(r).topicName === want.name);
    if (!t) {
      errors.push(`KafkaTopic for ${want.name}: missing (the catalogue has it)`);
      continue;
    }
    const s = spec<{ partitions?: number; replicas?: number; config?: Record<string, string | number> }>(t);
    if (s.partitions !== want.partitions) errors.push(`KafkaTopic ${t.metadata.name}: ${s.partitions} partitions, the catalogue says ${want.partitions}`);
    if (s.replicas !== TOPIC_REPLICAS) errors.push(`KafkaTopic ${t.metadata.name}: ${s.replicas} replicas, not ${TOPIC_REPLICAS}`);
    if (Number(s.config?.['min.insync.replicas']) !== TOPIC_MIN_INSYNC_REPLICAS) errors.push(`KafkaTopic ${t.metadata.name}: min.insync.replicas is not ${TOPIC_MIN_INSYNC_REPLICAS}`);
    for (const [k, v] of Object.entries(want.configs)) if (String(s.config?.[k]) !== v) errors.push(`KafkaTopic ${t.metadata.name}: ${k} is ${String(s.config?.[k])}, the catalogue says ${v}`);
  }
  for (const t of topics) {
    const topicName = spec<{ topicName?: string }>(t).topicName;
    if (!expected.some((e) => e.name === topicName)) errors.push(`KafkaTopic ${t.metadata.name}: ${topicName} is not in the catalogue`);
  }
  const brokers = resources
    .filter((r) => r.kind === 'KafkaNodePool' && spec<{ roles?: string[] }>(r).roles?.includes('broker'))
    .reduce((n, r) => n + (spec<{ replicas?: number }>(r).replicas ?? 0), 0);
  if (topics.length > 0 && brokers < TOPIC_REPLICAS) errors.push(`KafkaNodePool: ${brokers} brokers, fewer than the topics' ${TOPIC_REPLICAS} replicas`);
  return errors;
}
