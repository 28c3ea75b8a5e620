/**
 * Renders a Kustomize directory as `kubectl kustomize` does, for the part of Kustomize this
 * deployment uses, so the lint needs no kustomize binary: `resources` (YAML files and other
 * Kustomize directories), `namespace`, `images` and `patches` given as JSON 6902 operations with a
 * `target` (kind, name as an anchored regular expression, optionally group, version, namespace).
 * Anything else in a kustomization.yaml is refused, not ignored, so the rendering here cannot
 * silently differ from Kustomize's; the test compares both where kubectl is installed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export interface Resource {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [key: string]: unknown };
  [key: string]: unknown;
}

/** A rendered resource and the file it came from (for messages). */
export interface Rendered {
  readonly resource: Resource;
  readonly source: string;
}

interface PatchTarget {
  readonly kind?: string;
  readonly name?: string;
  readonly group?: string;
  readonly version?: string;
  readonly namespace?: string;
}

interface Kustomization {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  resources?: string[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
  patches?: { path?: string; patch?: string; target?: PatchTarget }[];
}

const KNOWN_FIELDS = new Set(['apiVersion', 'kind', 'namespace', 'resources', 'images', 'patches']);
/** Kinds without a namespace among those a Trawl deployment may hold. */
const CLUSTER_SCOPED = new Set(['Namespace', 'CustomResourceDefinition', 'ClusterRole', 'ClusterRoleBinding', 'PersistentVolume', 'StorageClass', 'PriorityClass']);

export class KustomizeError extends Error {
  override readonly name = 'KustomizeError';
}

function readKustomization(dir: string): Kustomization {
  const file = join(dir, 'kustomization.yaml');
  if (!existsSync(file)) throw new KustomizeError(`${dir} has no kustomization.yaml`);
  const k = (parse(readFileSync(file, 'utf8')) ?? {}) as Kustomization & Record<string, unknown>;
  const unknown = Object.keys(k).filter((key) => !KNOWN_FIELDS.has(key));
  if (unknown.length > 0) throw new KustomizeError(`${file}: ${unknown.join(', ')} is not rendered by this check (only ${[...KNOWN_FIELDS].join(', ')})`);
  return k;
}

function readResources(file: string): Rendered[] {
  return parseAllDocuments(readFileSync(file, 'utf8')).flatMap((doc, i) => {
    if (doc.errors.length > 0) throw new KustomizeError(`${file}, document ${i + 1}: ${doc.errors[0]!.message}`);
    const resource = doc.toJS() as Resource | null;
    if (resource === null) return [];
    if (typeof resource.apiVersion !== 'string' || typeof resource.kind !== 'string' || typeof resource.metadata?.name !== 'string') {
      throw new KustomizeError(`${file}, document ${i + 1}: not a Kubernetes resource (apiVersion, kind, metadata.name)`);
    }
    return [{ resource, source: file }];
  });
}

function groupVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

function matches(target: PatchTarget, r: Resource): boolean {
  const anchored = (pattern: string, value: string | undefined) => value !== undefined && new RegExp(`^(?:${pattern})$`).test(value);
  const { group, version } = groupVersion(r.apiVersion);
  return (
    (target.kind === undefined || anchored(target.kind, r.kind)) &&
    (target.name === undefined || anchored(target.name, r.metadata.name)) &&
    (target.group === undefined || anchored(target.group, group)) &&
    (target.version === undefined || anchored(target.version, version)) &&
    (target.namespace === undefined || anchored(target.namespace, r.metadata.namespace))
  );
}

type Json = unknown;
interface Operation {
  readonly op: 'add' | 'remove' | 'replace' | 'test';
  readonly path: string;
  readonly value?: Json;
}

function pointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new KustomizeError(`JSON pointer "${path}" does not start with /`);
  return path.slice(1).split('/').map((p) => p.replaceAll('~1', '/').replaceAll('~0', '~'));
}

/** RFC 6902 operations on `doc` (mutated); each path must lead somewhere, as Kustomize requires. */
export function applyJsonPatch(doc: Json, ops: readonly Operation[]): void {
  for (const op of ops) {
    const parts = pointer(op.path);
    const last = parts.pop();
    if (last === undefined) throw new KustomizeError(`patch ${op.op} of the whole document is not supported`);
    let parent: Json = doc;
    for (const p of parts) {
      parent = Array.isArray(parent) ? parent[Number(p)] : (parent as Record<string, Json> | undefined)?.[p];
      if (parent === undefined || parent === null || typeof parent !== 'object') throw new KustomizeError(`patch ${op.op} ${op.path}: ${p} does not exist`);
    }
    if (Array.isArray(parent)) {
      const index = last === '-' ? parent.length : Number(last);
      if (!Number.isInteger(index) || index < 0 || index > parent.length || (op.op !== 'add' && index >= parent.length)) {
        throw new KustomizeError(`patch ${op.op} ${op.path}: no index ${last}`);
      }
      if (op.op === 'add') parent.splice(index, 0, structuredClone(op.value));
      else if (op.op === 'replace') parent[index] = structuredClone(op.value);
      else if (op.op === 'remove') parent.splice(index, 1);
      else if (JSON.stringify(parent[index]) !== JSON.stringify(op.value)) throw new KustomizeError(`patch test ${op.path} failed`);
      continue;
    }
    const object = parent as Record<string, Json>;
    if (op.op !== 'add' && !(last in object)) throw new KustomizeError(`patch ${op.op} ${op.path}: ${last} does not exist`);
    if (op.op === 'add' || op.op === 'replace') object[last] = structuredClone(op.value);
    else if (op.op === 'remove') delete object[last];
    else if (JSON.stringify(object[last]) !== JSON.stringify(op.value)) throw new KustomizeError(`patch test ${op.path} failed`);
  }
}

function setImages(r: Resource, images: NonNullable<Kustomization['images']>): void {
  const podSpec = (r.spec as { template?: { spec?: Record<string, unknown> } } | undefined)?.template?.spec;
  if (!podSpec) return;
  for (const list of ['initContainers', 'containers'] as const) {
    for (const c of (podSpec[list] as { image?: string }[] | undefined) ?? []) {
      if (typeof c.image !== 'string') continue;
      const at = c.image.indexOf('@');
      const colon = c.image.lastIndexOf(':');
      const name = at >= 0 ? c.image.slice(0, at) : colon > c.image.lastIndexOf('/') ? c.image.slice(0, colon) : c.image;
      const image = images.find((i) => i.name === name);
      if (!image) continue;
      const tag = image.digest ? `@${image.digest}` : image.newTag ? `:${image.newTag}` : at >= 0 ? c.image.slice(at) : colon > c.image.lastIndexOf('/') ? c.image.slice(colon) : '';
      c.image = `${image.newName ?? name}${tag}`;
    }
  }
}

/** The resources `kubectl kustomize <dir>` prints, in its order of accumulation. */
export function renderKustomization(dir: string): Rendered[] {
  const root = resolve(dir);
  const k = readKustomization(root);
  const rendered: Rendered[] = [];
  for (const entry of k.resources ?? []) {
    const path = resolve(root, entry);
    if (!existsSync(path)) throw new KustomizeError(`${relative(process.cwd(), join(root, 'kustomization.yaml'))}: resource ${entry} does not exist`);
    rendered.push(...(statSync(path).isDirectory() ? renderKustomization(path) : readResources(path)));
  }
  for (const p of k.patches ?? []) {
    if (!p.target) throw new KustomizeError(`${root}: a patch without a target is a strategic merge, which this check does not render`);
    const text = p.path ? readFileSync(resolve(root, p.path), 'utf8') : p.patch;
    const ops = text === undefined ? undefined : (parse(text) as unknown);
    if (!Array.isArray(ops)) throw new KustomizeError(`${root}: only JSON 6902 patches (a list of operations) are rendered by this check`);
    const hits = rendered.filter((r) => matches(p.target!, r.resource));
    if (hits.length === 0) throw new KustomizeError(`${root}: the patch for ${JSON.stringify(p.target)} matches no resource`);
    for (const r of hits) applyJsonPatch(r.resource, ops as Operation[]);
  }
  if (k.images) for (const r of rendered) setImages(r.resource, k.images);
  if (k.namespace) for (const r of rendered) if (!CLUSTER_SCOPED.has(r.resource.kind)) r.resource.metadata.namespace = k.namespace;
  return rendered;
}

/** Every directory holding a kustomization.yaml: the base and each overlay, in name order. */
export function kustomizationDirs(base: string, overlays: string): string[] {
  const found = existsSync(overlays) ? readdirSync(overlays).sort().map((name) => join(overlays, name)) : [];
  return [base, ...found.filter((dir) => existsSync(join(dir, 'kustomization.yaml')))];
}
