/**
 * Offline validation of rendered manifests. Kubernetes' own kinds are checked by the models of
 * `kubernetes-models` (the API's OpenAPI schemas, compiled); the operators' custom resources
 * (Strimzi's Kafka, KafkaNodePool, KafkaTopic, CloudNativePG's Cluster) by ajv against the
 * OpenAPI schemas of their CustomResourceDefinitions, vendored unchanged under deploy/kubernetes/crds.
 *
 * A CRD schema lets unknown fields through (the API server prunes them silently), so a misspelt
 * field would vanish from the cluster without a word: here an object schema that lists its
 * properties and does not keep unknown fields (x-kubernetes-preserve-unknown-fields) refuses
 * others, as `kubectl apply --validate=strict` does. The models of kubernetes-models do not refuse
 * unknown fields; the policy (policy.ts) checks the fields that matter there by name.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicy';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Namespace } from 'kubernetes-models/v1/Namespace';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { ServiceAccount } from 'kubernetes-models/v1/ServiceAccount';
import { parseAllDocuments } from 'yaml';
import type { Resource } from './kustomize.ts';

interface Model {
  validate(): void;
}

/** Kubernetes' kinds a Trawl deployment holds, by `apiVersion/kind`. */
const CORE_MODELS: Readonly<Record<string, new (data: never) => Model>> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'v1/ServiceAccount': ServiceAccount,
  'apps/v1/Deployment': Deployment,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
};

type Schema = Record<string, unknown>;

/** The schema with unknown fields refused wherever it lists the known ones (see the header). */
export function strictSchema(schema: Schema): Schema {
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'properties' && value && typeof value === 'object') {
      out[key] = Object.fromEntries(Object.entries(value as Record<string, Schema>).map(([k, v]) => [k, strictSchema(v)]));
    } else if (Array.isArray(value)) {
      out[key] = value.map((v: unknown) => (v && typeof v === 'object' ? strictSchema(v as Schema) : v));
    } else if (value && typeof value === 'object') {
      out[key] = strictSchema(value as Schema);
    } else {
      out[key] = value;
    }
  }
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) out.additionalProperties = false;
  return out;
}

interface Crd {
  spec: { group: string; names: { kind: string }; versions: { name: string; served: boolean; schema?: { openAPIV3Schema: Schema } }[] };
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir)
    .sort()
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return yamlFiles(path);
      return name.endsWith('.yaml') || name.endsWith('.yml') ? [path] : [];
    });
}

/** Validators of every served version of every CRD under `dir`, by `group/version/kind`. */
export function crdValidators(dir: string): Map<string, ValidateFunction> {
  // Formats (int32, int-or-string, date-time…) are the API server's business; types and names are ours.
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
  const validators = new Map<string, ValidateFunction>();
  for (const file of yamlFiles(dir)) {
    for (const doc of parseAllDocuments(readFileSync(file, 'utf8'))) {
      const crd = doc.toJS() as (Crd & { kind?: string }) | null;
      if (crd?.kind !== 'CustomResourceDefinition') continue;
      for (const v of crd.spec.versions) {
        if (!v.served || !v.schema) continue;
        validators.set(`${crd.spec.group}/${v.name}/${crd.spec.names.kind}`, ajv.compile(strictSchema(v.schema.openAPIV3Schema)));
      }
    }
  }
  return validators;
}

/** RFC 1123 subdomain: what metadata.name must be for every kind here. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

function ajvMessage(e: ErrorObject): string {
  const extra = e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : e.keyword === 'enum' ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')})` : '';
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}${extra}`;
}

/** What is wrong with `r`: empty when the API server (and its operator) would take it. */
export function validateResource(r: Resource, crds: ReadonlyMap<string, ValidateFunction>): string[] {
  const errors: string[] = [];
  if (!DNS_SUBDOMAIN.test(r.metadata.name) || r.metadata.name.length > 253) errors.push(`metadata.name "${r.metadata.name}" is not a DNS subdomain`);
  const Core = CORE_MODELS[`${r.apiVersion}/${r.kind}`];
  if (Core) {
    try {
      new Core(structuredClone(r) as never).validate();
    } catch (err) {
      errors.push((err as Error).message);
    }
    return errors;
  }
  const validate = crds.get(`${r.apiVersion}/${r.kind}`);
  if (!validate) return [...errors, `${r.apiVersion} ${r.kind} has no schema here: neither a Kubernetes kind this check knows nor a vendored CRD`];
  if (!validate(r)) errors.push(...(validate.errors ?? []).map(ajvMessage));
  return errors;
}
