/**
 * deploy/kubernetes renders, validates and keeps its rules (src/kubernetes/); and each check bites:
 * a removed probe, a misspelt operator field, a wrong type, a topic the catalogue does not have.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { checkKubernetes } from '../src/kubernetes/check.ts';
import { applyJsonPatch, kustomizationDirs, renderKustomization, type Resource } from '../src/kubernetes/kustomize.ts';
import { BASE_DIR, CRDS_DIR, KUBERNETES_DIR, OVERLAYS_DIR } from '../src/kubernetes/paths.ts';
import { checkPolicy, serviceNames } from '../src/kubernetes/policy.ts';
import { crdValidators, validateResource } from '../src/kubernetes/validate.ts';

const crds = crdValidators(CRDS_DIR);
const dirs = kustomizationDirs(BASE_DIR, OVERLAYS_DIR);
const render = (dir: string): Resource[] => renderKustomization(dir).map((r) => r.resource);
const find = (rs: Resource[], kind: string, name: string): Resource => {
  const r = rs.find((x) => x.kind === kind && x.metadata.name === name);
  if (!r) throw new Error(`no ${kind} ${name}`);
  return r;
};
interface TestContainer {
  livenessProbe?: { httpGet?: { path?: string } };
  readinessProbe?: { httpGet?: { path?: string } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext?: Record<string, unknown>;
}
const key = (r: Resource) => `${r.kind}/${r.metadata.namespace ?? ''}/${r.metadata.name}`;

describe('deploy/kubernetes', () => {
  it('has the base and the dev and production overlays', () => {
    expect(dirs.map((d) => d.slice(d.indexOf('deploy/')))).toEqual(['deploy/kubernetes/base', 'deploy/kubernetes/overlays/dev', 'deploy/kubernetes/overlays/production']);
  });

  it('renders, validates and keeps the rules in the base and every overlay, with the topics as the catalogue says', () => {
    const { reports, topics } = checkKubernetes();
    expect(topics).toBeNull();
    for (const report of reports) expect(report.errors, report.dir).toEqual([]);
  });

  it.each(dirs.map((d) => [d.slice(d.indexOf('deploy/')), d]))('%s deploys every service with probes, limits, a non-root user and a disruption budget', (_, dir) => {
    const rs = render(dir);
    const services = serviceNames();
    expect(services).toEqual(['api', 'dispatcher', 'frontier', 'projector-ch', 'projector-pg', 'webhooks', 'worker']);
    for (const service of services) {
      const d = find(rs, 'Deployment', `trawl-${service}`) as Resource & { spec: { template: { spec: { securityContext: { runAsNonRoot: boolean; runAsUser: number }; containers: TestContainer[] } } } };
      const pod = d.spec.template.spec;
      expect(pod.securityContext.runAsNonRoot).toBe(true);
      expect(pod.securityContext.runAsUser).toBeGreaterThan(0);
      for (const c of pod.containers) {
        expect(c.livenessProbe?.httpGet?.path, `${service} liveness`).toBe('/healthz');
        expect(c.readinessProbe?.httpGet?.path, `${service} readiness`).toBe('/readyz');
        expect(Object.keys(c.resources.requests).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(c.resources.limits).sort()).toEqual(['cpu', 'memory']);
        expect(c.securityContext).toMatchObject({ runAsNonRoot: true, allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
      }
      expect(rs.some((r) => r.kind === 'PodDisruptionBudget' && r.metadata.name === `trawl-${service}`), `${service} PodDisruptionBudget`).toBe(true);
    }
    const hpa = find(rs, 'HorizontalPodAutoscaler', 'trawl-worker') as Resource & { spec: { scaleTargetRef: { name: string }; metrics: { type: string }[] } };
    expect(hpa.spec.scaleTargetRef.name).toBe('trawl-worker');
    expect(hpa.spec.metrics[0]!.type).toBe('External');
  });

  it('runs the worker sandboxed in production: a seccomp profile that allows its namespaces, the sandbox required', () => {
    const worker = find(render(join(OVERLAYS_DIR, 'production')), 'Deployment', 'trawl-worker') as Resource & { spec: { template: { spec: { securityContext: { seccompProfile: unknown }; containers: { env: { name: string; value?: string }[] }[] } } } };
    expect(worker.spec.template.spec.securityContext.seccompProfile).toEqual({ type: 'Localhost', localhostProfile: 'profiles/trawl-chromium.json' });
    expect(worker.spec.template.spec.containers[0]!.env).toContainEqual({ name: 'TRAWL_BROWSER_SANDBOX', value: 'required' });
  });

  it('gives production workers moby\'s default seccomp profile with only the namespaces and chroot of Chromium\'s sandbox added', () => {
    const profile = JSON.parse(readFileSync(join(KUBERNETES_DIR, 'seccomp', 'trawl-chromium.json'), 'utf8')) as { defaultAction: string; syscalls: { names: string[]; action: string; args?: unknown; includes?: unknown; excludes?: unknown }[] };
    expect(profile.defaultAction).toBe('SCMP_ACT_ERRNO');
    const unconditional = profile.syscalls.filter((r) => r.action === 'SCMP_ACT_ALLOW' && !r.args && !r.includes && !r.excludes).flatMap((r) => r.names);
    for (const call of ['chroot', 'clone', 'unshare']) expect(unconditional).toContain(call);
    // Nothing else that moby's profile keeps behind CAP_SYS_ADMIN is opened.
    for (const call of ['mount', 'setns', 'bpf', 'perf_event_open', 'ptrace']) expect(unconditional).not.toContain(call);
  });

  // The rendering here is Kustomize's where this deployment uses it: the same resources, field for field.
  it.skipIf(!hasKubectl())('renders as `kubectl kustomize` does', () => {
    for (const dir of dirs) {
      const theirs = parseAllDocuments(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' })).map((d) => d.toJS() as Resource);
      const ours = render(dir);
      expect(new Map(ours.map((r) => [key(r), r])), dir).toEqual(new Map(theirs.map((r) => [key(r), r])));
    }
  });
});

describe('the checks bite', () => {
  const base = () => render(BASE_DIR);

  it('a Deployment without its readiness probe, or probed on another port', () => {
    const rs = base();
    const worker = find(rs, 'Deployment', 'trawl-worker');
    applyJsonPatch(worker, [{ op: 'remove', path: '/spec/template/spec/containers/0/readinessProbe' }]);
    const api = find(rs, 'Deployment', 'trawl-api');
    applyJsonPatch(api, [{ op: 'replace', path: '/spec/template/spec/containers/0/livenessProbe/httpGet/port', value: 'http' }]);
    expect(checkPolicy(rs)).toEqual([
      'Deployment trawl-api, container api: livenessProbe probes port http, not the operator port 9460',
      'Deployment trawl-worker, container worker: no readinessProbe (an HTTP GET of /readyz on the operator port)',
    ]);
  });

  it('a container without limits, as root, with a writable root or a capability; a service without a Deployment or a budget', () => {
    const rs = base().filter((r) => !(r.kind === 'Deployment' && r.metadata.name === 'trawl-dispatcher') && !(r.kind === 'PodDisruptionBudget' && r.metadata.name === 'trawl-frontier'));
    const frontier = find(rs, 'Deployment', 'trawl-frontier');
    applyJsonPatch(frontier, [
      { op: 'remove', path: '/spec/template/spec/containers/0/resources/limits' },
      { op: 'replace', path: '/spec/template/spec/securityContext/runAsUser', value: 0 },
      { op: 'remove', path: '/spec/template/spec/securityContext/runAsNonRoot' },
      { op: 'remove', path: '/spec/template/spec/containers/0/securityContext/runAsNonRoot' },
      { op: 'replace', path: '/spec/template/spec/containers/0/securityContext/readOnlyRootFilesystem', value: false },
      { op: 'add', path: '/spec/template/spec/containers/0/securityContext/capabilities/add', value: ['NET_ADMIN'] },
    ]);
    expect(checkPolicy(rs)).toEqual([
      'Deployment trawl-dispatcher: missing (every service of apps/services/ is deployed)',
      'Deployment trawl-frontier, container frontier: no cpu limit',
      'Deployment trawl-frontier, container frontier: no memory limit',
      'Deployment trawl-frontier, container frontier: runAsNonRoot is not true',
      'Deployment trawl-frontier, container frontier: no non-root runAsUser',
      'Deployment trawl-frontier, container frontier: the root file system is writable',
      'Deployment trawl-frontier, container frontier: adds capabilities',
      'Deployment trawl-frontier: no PodDisruptionBudget selects its pods',
    ]);
  });

  it('no worker autoscaler, or one past trawl.fetch\'s partitions; a topic not in the catalogue, or with fewer replicas', () => {
    const rs = base();
    const hpa = find(rs, 'HorizontalPodAutoscaler', 'trawl-worker');
    applyJsonPatch(hpa, [{ op: 'replace', path: '/spec/maxReplicas', value: 40 }]);
    const jobs = find(rs, 'KafkaTopic', 'trawl.jobs');
    applyJsonPatch(jobs, [
      { op: 'replace', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/partitions', value: 3 },
    ]);
    const stray = structuredClone(jobs);
    applyJsonPatch(stray, [
      { op: 'replace', path: '/metadata/name', value: 'trawl.typo' },
      { op: 'replace', path: '/spec/topicName', value: 'trawl.typo' },
    ]);
    expect(checkPolicy([...rs, stray])).toEqual([
      "HorizontalPodAutoscaler trawl-worker: maxReplicas 40 above trawl.fetch's 12 partitions (workers past them idle)",
      'KafkaTopic trawl.jobs: 3 partitions, the catalogue says 6',
      'KafkaTopic trawl.jobs: 1 replicas, not 3',
      'KafkaTopic trawl.typo: trawl.typo is not in the catalogue',
    ]);
    expect(checkPolicy(rs.filter((r) => r.kind !== 'HorizontalPodAutoscaler'))).toContain('HorizontalPodAutoscaler for Deployment trawl-worker: missing');
  });

  it('a misspelt or mistyped field of a Strimzi or CloudNativePG resource; a mistyped Deployment', () => {
    const rs = base();
    const kafka = find(rs, 'Kafka', 'trawl');
    applyJsonPatch(kafka, [{ op: 'add', path: '/spec/kafka/replicas', value: 3 }]);
    expect(validateResource(kafka, crds)).toEqual(['/spec/kafka must NOT have additional properties (replicas)']);
    const pool = find(rs, 'KafkaNodePool', 'dual-role');
    applyJsonPatch(pool, [{ op: 'replace', path: '/spec/roles/0', value: 'leader' }]);
    expect(validateResource(pool, crds)).toEqual(['/spec/roles/0 must be equal to one of the allowed values (controller, broker)']);
    const postgres = find(rs, 'Cluster', 'trawl-postgres');
    applyJsonPatch(postgres, [{ op: 'replace', path: '/spec/instances', value: 'three' }]);
    expect(validateResource(postgres, crds)).toEqual(['/spec/instances must be integer']);
    const api = find(rs, 'Deployment', 'trawl-api');
    applyJsonPatch(api, [{ op: 'replace', path: '/spec/replicas', value: 'two' }]);
    expect(validateResource(api, crds).join('\n')).toMatch(/replicas/);
    expect(validateResource({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, crds)).toEqual([
      'example.com/v1 Widget has no schema here: neither a Kubernetes kind this check knows nor a vendored CRD',
    ]);
  });
});

function hasKubectl(): boolean {
  return (process.env.PATH ?? '').split(':').some((d) => d && existsSync(join(d, 'kubectl')));
}
