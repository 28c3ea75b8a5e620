/**
 * The whole offline check of deploy/kubernetes: the generated topics are the catalogue's, and the
 * base and every overlay render, validate against their schemas and keep the policy.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { ValidateFunction } from 'ajv';
import { REPO_ROOT } from '../import-layers.js';
import { renderKafkaTopics } from './kafka-topics.ts';
import { kustomizationDirs, renderKustomization } from './kustomize.ts';
import { BASE_DIR, CRDS_DIR, OVERLAYS_DIR, TOPICS_FILE } from './paths.ts';
import { checkPolicy } from './policy.ts';
import { crdValidators, validateResource } from './validate.ts';

export interface KustomizationReport {
  /** The kustomization's directory, from the repository's root. */
  readonly dir: string;
  readonly resources: number;
  readonly errors: readonly string[];
}

/** One kustomization directory: rendered, every resource validated, the policy kept. */
export function checkKustomization(dir: string, crds: ReadonlyMap<string, ValidateFunction> = crdValidators(CRDS_DIR)): KustomizationReport {
  const name = relative(REPO_ROOT, dir);
  let rendered;
  try {
    rendered = renderKustomization(dir);
  } catch (err) {
    return { dir: name, resources: 0, errors: [(err as Error).message] };
  }
  const errors: string[] = [];
  const seen = new Set<string>();
  for (const { resource, source } of rendered) {
    const id = `${resource.apiVersion} ${resource.kind} ${resource.metadata.namespace ?? ''}/${resource.metadata.name}`;
    if (seen.has(id)) errors.push(`${id}: defined twice`);
    seen.add(id);
    for (const e of validateResource(resource, crds)) errors.push(`${resource.kind} ${resource.metadata.name} (${relative(REPO_ROOT, source)}): ${e}`);
  }
  errors.push(...checkPolicy(rendered.map((r) => r.resource)));
  return { dir: name, resources: rendered.length, errors };
}

/** Why kafka/topics.yaml is not what the catalogue says, or null when it is. */
export function topicsDrift(): string | null {
  return readFileSync(TOPICS_FILE, 'utf8') === renderKafkaTopics()
    ? null
    : `${relative(REPO_ROOT, TOPICS_FILE)} differs from the topic catalogue: run \`npm run kubernetes -w @trawl/checks -- --write\``;
}

export function checkKubernetes(): { readonly reports: readonly KustomizationReport[]; readonly topics: string | null } {
  const crds = crdValidators(CRDS_DIR);
  return { topics: topicsDrift(), reports: kustomizationDirs(BASE_DIR, OVERLAYS_DIR).map((dir) => checkKustomization(dir, crds)) };
}
